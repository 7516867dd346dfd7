// `--callbacks`: the benchmark's worker listens for the simulator's callbacks (docs/callbacks.md),
// and the job's model takes them, so every create carries metadata.callback_url.
import { randomBytes } from 'node:crypto';
import { CALLBACK_SECRET_ENV } from '../../worker/callback-secret';

export const withCallbacks = process.argv.includes('--callbacks');

/** The worker's arguments; the fleet's secret goes in the environment the stack hands the worker. */
export function callbackWorkerArgs(): string[] {
  if (!withCallbacks) return [];
  process.env[CALLBACK_SECRET_ENV] ??= randomBytes(32).toString('hex');
  return ['--callbacks', '127.0.0.1:0'];
}

/** The job file's lines that turn callbacks on for its model (the default of test/support/jobs.ts). */
export function callbackJobLines(model = 'seedance-1-0-pro-250528'): string {
  return withCallbacks ? `models:\n  ${model}:\n    callbacks: true` : '';
}

/** polling.backstop for a job whose renders take up to `longestRenderMs`: past them, so callbacks alone wake checks. */
export function backstopLine(longestRenderMs: number): string {
  return withCallbacks ? `\n  backstop: ${Math.max(longestRenderMs * 2, 1_000)}ms` : '';
}
