// `run`'s handling of Ctrl-C and SIGTERM: the hint at once, then an orderly stop by the command's own flow.
import { setMaxListeners } from 'node:events';
import type { Client } from '@temporalio/client';
import type { Output } from '../output';

/**
 * Ctrl-C (SIGINT) or SIGTERM during `run`: the hint at once, then an orderly stop by the command's
 * own flow, never by the handler: the flow's calls to Temporal in flight are canceled, the flow
 * unwinds, and only then are the worker and the connection closed. Closing the connection under a
 * call let the SDK's retry of that call (a timer) meet the closed channel: an uncaught "Channel has
 * been shut down" and exit 1. Exit 130 (docs/commands.md). Before the session opens nothing uses
 * Temporal: the command ends at once. A second press ends it at once too.
 */
export interface Interrupt {
  readonly interrupted: boolean;
  /**
   * Runs `fn` with its Temporal calls canceled by an interrupt. A scope of its own each time: the SDK
   * adds a listener per call to the signal and never removes it, so one signal for a whole run grows
   * without bound; a scope's signal goes with the scope.
   */
  scoped<T>(client: Client, fn: () => Promise<T>): Promise<T>;
  /** Set while a Temporal session is open or opening: the flow then ends the command itself. */
  sessionOpening: boolean;
  /** Clears the live display before the hint is printed. */
  clearView: () => void;
  /** Resolves when interrupted. */
  readonly whenInterrupted: Promise<void>;
  dispose(): void;
}

export function watchInterrupt(jobFile: string, out: Output): Interrupt {
  const controller = new AbortController();
  let fire: () => void = () => {};
  const whenInterrupted = new Promise<void>((resolve) => {
    fire = resolve;
  });
  const state: Interrupt = {
    get interrupted() {
      return controller.signal.aborted;
    },
    async scoped(client, fn) {
      const scope = new AbortController();
      setMaxListeners(0, scope.signal); // one per call of the scope, dropped with it
      const abort = () => scope.abort();
      controller.signal.addEventListener('abort', abort, { once: true });
      if (controller.signal.aborted) scope.abort();
      try {
        return await client.withAbortSignal(scope.signal, fn);
      } finally {
        controller.signal.removeEventListener('abort', abort);
      }
    },
    sessionOpening: false,
    clearView: () => {},
    whenInterrupted,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
  const onSignal = () => {
    if (controller.signal.aborted || !state.sessionOpening) {
      if (!controller.signal.aborted) out.note(`\ninterrupted: the job keeps its state and resumes with: reelflow run ${jobFile}`);
      process.exit(130);
    }
    state.clearView();
    out.note(`\ninterrupted: the job keeps its state and resumes with: reelflow run ${jobFile}`);
    controller.abort();
    fire();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return state;
}
