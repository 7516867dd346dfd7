// This process listens for providers' callbacks (docs/callbacks.md), for `run` and `worker`: the
// listener signals the render workflow a callback names, and the creates this process's worker makes
// for models with `callbacks: true` carry the public address and a per-item token.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { sendCallbackAddressesFromThisWorker } from '../activities/callback-address';
import { callbackSecret, CallbackSecretError } from '../worker/callback-secret';
import { startCallbackListener, type CallbackListener } from '../worker/callback-listener';
import { TASK_CALLBACK_SIGNAL } from '../workflows/ids';
import { UsageError } from './errors';

export interface ListenAddress {
  host: string;
  port: number;
}

/** Where to listen and the address the gateway reaches (its default: the listener itself). */
export interface CallbackPlan {
  listen: ListenAddress;
  publicUrl?: string;
}

/**
 * Starts the listener and has this process's creates carry its address. `client` is asked at each
 * callback (run opens its connection after its worker is ready to take creates, so after this).
 */
export async function listenForCallbacks(
  plan: CallbackPlan | undefined,
  client: () => Client | undefined,
  note: (line: string) => void,
): Promise<CallbackListener | undefined> {
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
