// The callback address a create carries (docs/callbacks.md): set once per worker process by the
// command that listens (`worker --callbacks`, `run --callbacks`), read by the create activity. The
// address is the worker's public callback URL and a token naming the item's render workflow
// (gateway/callback-token.ts); whichever worker of the fleet receives the callback can check it.
import type { JobSettings, RenderRequest } from '../jobfile/plan';
import { mintCallbackToken } from '../gateway/callback-token';

interface CallbackAddressing {
  /** Where the gateway's provider reaches this fleet's listeners, without the token. */
  publicUrl: string;
  secret: Buffer;
}

let addressing: CallbackAddressing | undefined;

/** Called by a command that listens for callbacks; undefined: this worker's creates carry none. */
export function sendCallbackAddressesFromThisWorker(next: CallbackAddressing | undefined): void {
  addressing = next;
}

/**
 * The callback address of one create, or undefined: none when this worker does not listen, when the
 * model does not take callbacks (`models.<m>.callbacks`), or on the openai protocol, whose create
 * carries no metadata. `workflowId` is the render workflow's, which the callback will signal.
 */
export function callbackUrlFor(
  settings: Pick<JobSettings, 'callbacks'>,
  request: RenderRequest,
  workflowId: string | undefined,
): string | undefined {
  if (!addressing || !workflowId || request.protocol !== 'general') return undefined;
  if (!settings.callbacks?.models.includes(request.model)) return undefined;
  return `${addressing.publicUrl.replace(/\/+$/, '')}/${mintCallbackToken(addressing.secret, workflowId)}`;
}
