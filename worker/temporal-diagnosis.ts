// Why a connection to a Temporal service failed, in words a user can act on, and whether trying
// again could help. The SDK's errors do not say: the client's (grpc-js) is "Failed to connect before
// the deadline" whatever happened, the worker's (Rust) a debug dump such as
// `tonic::transport::Error(Transport, ConnectError(Custom { kind: InvalidData, error:
// InvalidCertificate(UnknownIssuer) }))`. So a TLS handshake of our own, with the same settings,
// names a certificate problem, and the namespace call a connection makes names a refused API key.
import { isIP } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { TLSConfig } from '@temporalio/client';

export interface Diagnosis {
  /** What is wrong, naming the address and the setting to change. */
  problem: string;
  /** Retrying cannot help (a certificate, a refused key): fail at once instead of for seconds. */
  final: boolean;
}

/** The TLS setting of a connection, as envconfig gives it: a configuration, true (defaults), or off. */
export type TlsSetting = TLSConfig | boolean | null | undefined;

const CA_SETTING = "TEMPORAL_TLS_SERVER_CA_CERT_PATH (or the profile's tls.server_ca_cert_path)";
const TLS_SETTINGS = "TEMPORAL_TLS / TEMPORAL_TLS_* (or the profile's tls section; an API key turns TLS on too)";
const KEY_SETTING = "TEMPORAL_API_KEY (or the profile's api_key)";

function hostAndPort(address: string): { host: string; port: number } {
  const url = new URL(`grpc://${address}`);
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port || 7233) };
}

type Handshake = { ok: true } | { ok: false; code: string; message: string };

/** What a server said (an error's text, names from its certificate) is shown bounded and on one line. */
function bounded(text: unknown): string {
  return String(text)
    .replace(/\p{Cc}+/gu, ' ')
    .slice(0, 300);
}

/** One TLS handshake (ALPN h2, as gRPC makes it), verifying the server as the SDK would when `verify`. */
function handshake(address: string, tls: TLSConfig, verify: boolean, timeoutMs: number): Promise<Handshake> {
  const { host, port } = hostAndPort(address);
  const serverName = tls.serverNameOverride ?? (isIP(host) ? undefined : host);
  const options: ConnectionOptions = {
    host,
    port,
    servername: serverName,
    ca: tls.serverRootCACertificate ? Buffer.from(tls.serverRootCACertificate) : undefined,
    cert: tls.clientCertPair ? Buffer.from(tls.clientCertPair.crt) : undefined,
    key: tls.clientCertPair ? Buffer.from(tls.clientCertPair.key) : undefined,
    ALPNProtocols: ['h2'],
    rejectUnauthorized: verify,
  };
  return new Promise((resolve) => {
    const socket = tlsConnect(options);
    const finish = (result: Handshake) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ ok: false, code: 'ETIMEDOUT', message: `no TLS handshake within ${timeoutMs} ms` }), timeoutMs);
    socket.once('secureConnect', () => finish({ ok: true }));
    socket.once('error', (error: NodeJS.ErrnoException) =>
      finish({ ok: false, code: error.code ?? 'ERROR', message: bounded(error.message) }),
    );
  });
}

const CERTIFICATE_CODE = /CERT|ISSUER|SELF_SIGNED|SIGNATURE|ALTNAME|INVALID_CA|HOSTNAME/;
const NOT_TLS = /wrong version number|packet length too long|unknown protocol|http request/i;
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT']);

/** Nothing answers (yet): worth retrying, and worth saying instead of the SDK's "Failed to connect before the deadline". */
function unreachable(address: string, result: { code: string; message: string }): Diagnosis | undefined {
  return UNREACHABLE.has(result.code) ? { problem: `no connection to ${address}: ${result.message}`, final: false } : undefined;
}

/**
 * For a connection with TLS on: a certificate the settings do not trust, or a service that does not
 * speak TLS, is final; nothing listening is not (a server may be starting); undefined when the
 * handshake tells nothing.
 */
export async function diagnoseTls(address: string, setting: TLSConfig | true, timeoutMs = 3_000): Promise<Diagnosis | undefined> {
  const tls = setting === true ? {} : setting;
  const result = await handshake(address, tls, true, timeoutMs);
  if (result.ok) return undefined;
  if (result.code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return {
      problem:
        `the TLS certificate of ${address} does not name that address: ${result.message}. Connect by a name the ` +
        "certificate lists, or set TEMPORAL_TLS_SERVER_NAME (or the profile's tls.server_name) to one",
      final: true,
    };
  }
  if (CERTIFICATE_CODE.test(result.code)) {
    const hint = tls.serverRootCACertificate
      ? `it is not signed by the CA in ${CA_SETTING}: point that at the CA that signed the server's certificate`
      : `if the service uses a private CA, set ${CA_SETTING} to it`;
    return { problem: `the TLS certificate of ${address} is not trusted: ${result.message} (${result.code}); ${hint}`, final: true };
  }
  if (NOT_TLS.test(result.message)) {
    return { problem: `${address} does not speak TLS (${result.message}): for a plain-text service, remove ${TLS_SETTINGS}`, final: true };
  }
  return unreachable(address, result);
}

/** For a connection with TLS off that failed: a service that speaks TLS is a setting to change, not a fault to wait out. */
export async function diagnosePlainText(address: string, timeoutMs = 3_000): Promise<Diagnosis | undefined> {
  const result = await handshake(address, {}, false, timeoutMs);
  if (!result.ok) return unreachable(address, result);
  return {
    problem:
      `${address} speaks TLS, and reelflow connected without it: set TEMPORAL_TLS=true, and ${CA_SETTING} if its ` +
      "certificate comes from a private CA (or the profile's tls section)",
    final: true,
  };
}

/** Either TLS diagnosis, by the connection's setting. */
export function diagnoseHandshake(address: string, tls: TlsSetting): Promise<Diagnosis | undefined> {
  return tls ? diagnoseTls(address, tls) : diagnosePlainText(address);
}

// gRPC status codes (both SDK connections report them as `code`).
const NOT_FOUND = 5;
const PERMISSION_DENIED = 7;
const UNAUTHENTICATED = 16;

/** The service answered but will not serve the namespace: a setting to change (final), or undefined. */
export function diagnoseNamespaceError(address: string, namespace: string, apiKey: unknown, error: unknown): Diagnosis | undefined {
  const { code, details, message } = error as { code?: unknown; details?: unknown; message?: unknown };
  const said = bounded(details || message || '');
  if (code === PERMISSION_DENIED || code === UNAUTHENTICATED) {
    const hint = apiKey
      ? `the API key in ${KEY_SETTING} is not valid for it`
      : `it needs credentials: set ${KEY_SETTING}, or a client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH / TEMPORAL_TLS_CLIENT_KEY_PATH)`;
    return { problem: `${address} refused access to namespace "${namespace}" (${said}): ${hint}`, final: true };
  }
  if (code === NOT_FOUND) {
    return {
      problem: `namespace "${namespace}" does not exist on ${address} (${said}): check TEMPORAL_NAMESPACE (or the profile's namespace)`,
      final: true,
    };
  }
  return undefined;
}
