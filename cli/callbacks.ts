// `--callbacks HOST:PORT [--callback-url PUBLIC_URL] [--callbacks-public]` of `worker` and `run`
// (docs/callbacks.md): this process listens for providers' callbacks, and the creates its worker
// makes for models with `callbacks: true` carry the public address and a per-item token.
import { isIPv4, isIPv6 } from 'node:net';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Command } from 'commander';
import { sendCallbackAddressesFromThisWorker } from '../activities/callback-address';
import { isLoopbackHost } from '../jobfile/key-rule';
import { callbackSecret, CallbackSecretError } from '../worker/callback-secret';
import { startCallbackListener, type CallbackListener } from '../worker/callback-listener';
import { TASK_CALLBACK_SIGNAL } from '../workflows/ids';
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

interface ListenAddress {
  host: string;
  port: number;
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
export function callbackPlan(options: CallbackOptions): { listen: ListenAddress; publicUrl?: string } | undefined {
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

/**
 * Starts the listener and has this process's creates carry its address. `client` is asked at each
 * callback (run opens its connection after its worker is ready to take creates, so after this).
 */
export async function listenForCallbacks(
  options: CallbackOptions,
  client: () => Client | undefined,
  note: (line: string) => void,
): Promise<CallbackListener | undefined> {
  const plan = callbackPlan(options);
  if (!plan) return undefined;
  let secret: ReturnType<typeof callbackSecret>;
  try {
    secret = callbackSecret();
  } catch (error) {
    if (error instanceof CallbackSecretError) throw new UsageError(error.message);
    throw error;
  }
  const listener = await startCallbackListener({
    ...plan.listen,
    secret: secret.secret,
    warn: note,
    signal: async (workflowId) => {
      const temporal = client();
      if (!temporal) throw new Error('not connected to Temporal yet');
      try {
        await temporal.workflow.getHandle(workflowId).signal(TASK_CALLBACK_SIGNAL);
        return 'signalled';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return 'gone';
        throw error;
      }
    },
  });
  const publicUrl = plan.publicUrl ?? listener.url;
  sendCallbackAddressesFromThisWorker({ publicUrl, secret: secret.secret });
  note(`callbacks: listening on ${listener.url}, creates carry ${publicUrl}/<token> (secret: ${secret.source}; docs/callbacks.md)`);
  return {
    url: listener.url,
    close: async () => {
      sendCallbackAddressesFromThisWorker(undefined);
      await listener.close();
    },
  };
}
