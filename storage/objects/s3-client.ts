// The one way reelflow builds an S3 client: for videos and the manifest (s3.ts) and for anything else
// it keeps in a bucket. Credentials come from the standard AWS chain unless given (tests); never
// from a job file.
//
// Request checksums. Since 3.729 the AWS SDK adds a CRC32 header (`x-amz-checksum-crc32`,
// `x-amz-sdk-checksum-algorithm`) to every PutObject and UploadPart by default
// (requestChecksumCalculation WHEN_SUPPORTED), and several S3-compatible stores reject those headers.
// (reelflow also used to name the algorithm on every upload itself, which the SDK honours whatever
// the setting, so AWS_REQUEST_CHECKSUM_CALCULATION=when_required could not turn it off.) reelflow
// defaults to WHEN_REQUIRED instead: a checksum header only where the operation requires one (none
// that reelflow sends), and bodies signed with their sha256 (SigV4's signed payload), which the
// store recomputes: about 0.6 CPU-s per GiB more on the client than CRC32 (measured on MinIO). `AWS_REQUEST_CHECKSUM_CALCULATION` or the profile's
// `request_checksum_calculation` setting still decide when set, read exactly as the SDK reads them:
// `when_supported` brings back the CRC32 headers (then parts go UNSIGNED-PAYLOAD, see
// s3-part-uploader.ts), which saves a sha256 pass per side where the store takes them.
import { createRequire } from 'node:module';
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { S3OutputSettings } from '../../jobfile/plan';
import { checksumInsteadOfPayloadHash } from './s3-part-uploader';

export type RequestChecksumCalculation = 'WHEN_SUPPORTED' | 'WHEN_REQUIRED';

/** What reelflow sends when neither the environment nor the AWS config file says. */
export const DEFAULT_REQUEST_CHECKSUM_CALCULATION: RequestChecksumCalculation = 'WHEN_REQUIRED';

export interface S3ClientOptions {
  /** Explicit credentials (tests). Default: the standard AWS chain (environment, profile, SSO, IMDS). Never from a job file. */
  credentials?: S3ClientConfig['credentials'];
  /** Attempts per request, retries included (default 3). */
  maxAttempts?: number;
  /** Connection set-up limit in ms (default 10 s), so an unreachable endpoint fails promptly. */
  connectionTimeoutMs?: number;
}

/** Where the client connects: an output's S3 settings, or any other bucket's. */
export type S3Endpoint = Pick<S3OutputSettings, 'region' | 'endpoint' | 'forcePathStyle'>;

export function createS3Client(endpoint: S3Endpoint, options: S3ClientOptions = {}): S3Client {
  const client = new S3Client({
    region: endpoint.region,
    ...(endpoint.endpoint ? { endpoint: endpoint.endpoint } : {}),
    forcePathStyle: endpoint.forcePathStyle,
    ...(options.credentials ? { credentials: options.credentials } : {}),
    maxAttempts: options.maxAttempts ?? 3,
    requestHandler: { connectionTimeout: options.connectionTimeoutMs ?? 10_000, socketTimeout: 120_000 },
    requestChecksumCalculation: requestChecksumCalculationFromConfig(),
  });
  checksumInsteadOfPayloadHash(client);
  return client;
}

type Provider<T> = () => Promise<T>;
interface ConfigSelectors<T> {
  environmentVariableSelector: (env: Record<string, string | undefined>) => T | undefined;
  configFileSelector: (profile: Record<string, string | undefined>) => T | undefined;
  default: T;
}

/**
 * The SDK's own resolution of the setting (environment variable, then the profile in the shared
 * config files, AWS_PROFILE and AWS_CONFIG_FILE included; an invalid value is refused as the SDK
 * refuses it), with reelflow's default. Its pieces are the SDK's: loaded from where
 * @aws-sdk/client-s3 itself loads them, so they are the versions it uses.
 */
export function requestChecksumCalculationFromConfig(): Provider<RequestChecksumCalculation> {
  const sdkRequire = createRequire(require.resolve('@aws-sdk/client-s3'));
  const { loadConfig } = sdkRequire('@smithy/core/config') as {
    loadConfig: <T>(selectors: ConfigSelectors<T>, configuration?: { profile?: string }) => Provider<T>;
  };
  const { NODE_REQUEST_CHECKSUM_CALCULATION_CONFIG_OPTIONS: sdkSelectors } = sdkRequire('@aws-sdk/checksums/flexible-checksums') as {
    NODE_REQUEST_CHECKSUM_CALCULATION_CONFIG_OPTIONS: ConfigSelectors<RequestChecksumCalculation>;
  };
  return loadConfig({ ...sdkSelectors, default: DEFAULT_REQUEST_CHECKSUM_CALCULATION });
}
