// `--callbacks HOST:PORT [--callback-url PUBLIC_URL] [--callbacks-public]` of `worker` and `run`
// (docs/callbacks.md): this process listens for providers' callbacks, and the creates its worker
// makes for models with `callbacks: true` carry the public address and a per-item token. The options
// are read here; the listener is client/callbacks.ts.
import { isIPv4, isIPv6 } from 'node:net';
import type { Command } from 'commander';
import type { CallbackPlan, ListenAddress } from '../client/callbacks';
import { isLoopbackHost } from '../jobfile/key-rule';
import { UsageError } from './errors';

export interface CallbackOptions {
  callbacks?: string;
  callbackUrl?: string;
  callbacksPublic?: boolean;
}

export function addCallbackOptions(command: Command): Command {
  return command
    .option(
      '--callbacks <HOST:PORT>',
      'listen for gateway callbacks there (a port alone: 127.0.0.1) and send a callback address with each create of a model with callbacks: true (docs/callbacks.md)',
    )
    .option('--callback-url <PUBLIC_URL>', 'the address the gateway reaches the listener at (an ingress); default: the listener itself')
    .option('--callbacks-public', 'let --callbacks listen on an address other than loopback (needs --callback-url; docs/callbacks.md)');
}

const USAGE = 'use HOST:PORT or a port alone, e.g. --callbacks 8790 (loopback) or --callbacks 0.0.0.0:8790 --callbacks-public';

export function parseCallbackAddress(value: string): ListenAddress {
  const text = value.trim();
  const match = /^(?:(?:\[([^\]]+)\]|([^:[\]]+)):)?(\d{1,5})$/.exec(text);
  if (!match) throw new UsageError(`--callbacks "${value}": not HOST:PORT; ${USAGE}`);
  const [, v6, name, portText = ''] = match;
  const port = Number(portText);
  if (port > 65_535) throw new UsageError(`--callbacks "${value}": port ${portText} is above 65535`);
  const host = v6 ?? (name === undefined || name.toLowerCase() === 'localhost' ? '127.0.0.1' : name);
  if (!isIPv4(host) && !isIPv6(host)) throw new UsageError(`--callbacks "${value}": "${host}" is not an IP address; ${USAGE}`);
  return { host, port };
}

/** A public address: http(s), no credentials, no query or fragment (the token is appended as a path segment). */
export function parseCallbackUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `--callback-url "${value}": not a URL; give the address the gateway reaches, e.g. https://hooks.example.com/reelflow`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`--callback-url "${value}": must be http(s)`);
  if (url.username || url.password) throw new UsageError('--callback-url: no user:password in the address');
  if (url.search || url.hash) throw new UsageError(`--callback-url "${value}": no query or fragment (the token is added to the path)`);
  return url.toString().replace(/\/+$/, '');
}

/** What the options ask for, checked before anything listens; undefined without --callbacks. */
export function callbackPlan(options: CallbackOptions): CallbackPlan | undefined {
  if (options.callbacks === undefined) {
    if (options.callbackUrl !== undefined || options.callbacksPublic)
      throw new UsageError('--callback-url and --callbacks-public go with --callbacks HOST:PORT');
    return undefined;
  }
  const listen = parseCallbackAddress(options.callbacks);
  const publicUrl = options.callbackUrl === undefined ? undefined : parseCallbackUrl(options.callbackUrl);
  if (!isLoopbackHost(listen.host)) {
    if (!publicUrl || !options.callbacksPublic) {
      throw new UsageError(
        `--callbacks ${options.callbacks}: listening beyond loopback needs the public address (--callback-url) and --callbacks-public; ` +
          'put the listener behind an ingress with TLS (docs/callbacks.md)',
      );
    }
    if (listen.port === 0) throw new UsageError(`--callbacks ${options.callbacks}: a public listener needs a fixed port`);
  }
  return { listen, ...(publicUrl ? { publicUrl } : {}) };
}
