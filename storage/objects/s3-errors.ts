// Turns AWS SDK errors into StorageErrors that say what to fix: which bucket, which endpoint,
// and whether the bucket, the credentials or the network is the problem. Never a secret: messages
// are built from the error's name and our own settings, not from request details.
import type { S3OutputSettings } from '../../jobfile/plan';
import { errnoCode } from './errors';
import { StorageError } from './errors';

interface SdkErrorShape {
  name?: string;
  code?: string;
  message?: string;
  errors?: unknown[];
  $metadata?: { httpStatusCode?: number };
}

const CREDENTIAL_ERRORS = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'TokenRefreshRequired',
  'InvalidClientTokenId',
  // Versity's S3 gateway for an access key it does not know, with HTTP 404: not a missing object.
  'XAdminUserNotFound',
]);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'EADDRNOTAVAIL',
]);

/** Where requests go, for messages: the endpoint without any user-info or query, or the AWS region. */
export function endpointLabel(settings: Pick<S3OutputSettings, 'endpoint' | 'region'>): string {
  if (!settings.endpoint) return `AWS S3 (region ${settings.region})`;
  try {
    const url = new URL(settings.endpoint);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return 'the configured S3 endpoint';
  }
}

export function s3ErrorName(err: unknown): string {
  const e = (err ?? {}) as SdkErrorShape;
  return e.name ?? 'Error';
}

function networkCode(err: unknown): string | undefined {
  const e = (err ?? {}) as SdkErrorShape;
  const code = errnoCode(err) ?? errnoCode(e.errors?.[0]);
  if (code && NETWORK_CODES.has(code)) return code;
  if (e.name === 'TimeoutError') return 'timed out';
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== err ? networkCode(cause) : undefined;
}

export function isNotFound(err: unknown): boolean {
  const e = (err ?? {}) as SdkErrorShape;
  if (e.name === 'NotFound' || e.name === 'NoSuchKey') return true;
  return e.$metadata?.httpStatusCode === 404 && e.name !== 'NoSuchBucket' && !CREDENTIAL_ERRORS.has(e.name ?? '');
}

export interface S3ErrorContext {
  /** What was being done, e.g. `write to s3://bucket/prefix/`. */
  action: string;
  bucket: string;
  /** endpointLabel(settings). */
  where: string;
}

export function describeS3Error(err: unknown, ctx: S3ErrorContext): StorageError {
  if (err instanceof StorageError) return err;
  const name = s3ErrorName(err);
  const status = ((err ?? {}) as SdkErrorShape).$metadata?.httpStatusCode;
  const net = networkCode(err);
  let message: string;
  if (net) {
    message = `cannot reach the S3 endpoint ${ctx.where} (${net}): is the server running and the address right?`;
  } else if (name === 'NoSuchBucket') {
    message = `S3 bucket "${ctx.bucket}" does not exist at ${ctx.where}: create it or fix output.s3.bucket`;
  } else if (CREDENTIAL_ERRORS.has(name)) {
    message =
      `S3 credentials were rejected by ${ctx.where} (${name}): check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY ` +
      `or AWS_PROFILE in the worker's environment`;
  } else if (name === 'CredentialsProviderError') {
    message =
      `no S3 credentials found for ${ctx.where}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, ` +
      `in the worker's environment (never in the job file)`;
  } else if (name === 'AccessDenied' || name === 'Forbidden' || status === 403) {
    message = `access denied to S3 bucket "${ctx.bucket}" at ${ctx.where}: the credentials lack permission to ${ctx.action}`;
  } else if (name === 'AuthorizationHeaderMalformed' || name === 'PermanentRedirect' || name === 'IllegalLocationConstraintException') {
    message = `S3 bucket "${ctx.bucket}" is not in the configured region at ${ctx.where} (${name}): fix output.s3.region`;
  } else {
    const detail = ((err ?? {}) as SdkErrorShape).message;
    message = `cannot ${ctx.action} at ${ctx.where}: ${name}${status ? ` (HTTP ${status})` : ''}${detail && detail !== name ? `: ${detail}` : ''}`;
  }
  return new StorageError(message, { cause: err });
}
