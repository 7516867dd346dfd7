// The child process that expands a job file for a worker (activities/plan-file.ts): it gets what to
// read by IPC, writes the plan's items as JSON lines to the file it is given, answers with
// everything else (small) and exits, so the parse's peak memory is given back to the system.
import { writeFileSync } from 'node:fs';
import type { PriceTable } from '../jobfile/prices';
import type { RedoTake } from '../jobfile/takes';
import type { InputsRef } from '../storage/inputs/refs';
import { expandPlan } from './plan-load';
import type { PlanChildAnswer } from './plan-file';

export interface PlanChildRequest {
  jobFile: string;
  runDate: string;
  inputs?: InputsRef;
  redo?: readonly RedoTake[];
  prices?: PriceTable;
  /** Folders outside the job file's own its user let it read (JobInput.allowRead). */
  allowRead?: readonly string[];
  itemsPath: string;
}

async function answer(request: PlanChildRequest): Promise<PlanChildAnswer> {
  try {
    const { plan, digest, budgets, unpriced } = await expandPlan(
      request.jobFile,
      request.runDate,
      request.inputs,
      request.redo,
      request.prices,
      request.allowRead,
    );
    const { items, ...head } = plan;
    const offsets = [0];
    const lines = items.map((item) => {
      const line = Buffer.from(JSON.stringify(item) + '\n', 'utf8');
      offsets.push(offsets[offsets.length - 1]! + line.length);
      return line;
    });
    writeFileSync(request.itemsPath, Buffer.concat(lines));
    return { ok: true, head, digest, budgets, unpriced, offsets };
  } catch (error) {
    const e = error as Error & { type?: string; nonRetryable?: boolean };
    return { ok: false, message: e.message ?? String(error), ...(e.type ? { type: e.type } : {}), nonRetryable: e.nonRetryable === true };
  }
}

process.once('message', (request: PlanChildRequest) => {
  void answer(request).then((reply) => process.send?.(reply, () => process.exit(0)));
});
