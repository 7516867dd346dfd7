// A job's expanded plan as a worker keeps it (docs/worker-memory.md): the settings and
// figures in memory, the items in a file read one page at a time. The job file is expanded by a
// child process (activities/plan-child.ts), so a worker's resident memory does not grow with the
// number of items: the parse of a large job file and the whole item list never live in the worker.
import { fork } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, unlinkSync, closeSync, readSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import type { CallBudgetsMs, Plan, PlanItem } from '../jobfile/plan';
import type { PriceTable } from '../jobfile/prices';
import type { RedoTake } from '../jobfile/takes';
import type { InputsRef } from '../storage/inputs/refs';
import { asFailureKind } from '../domain/failures';
import { finalFailure } from './failures';
import type { PlanChildRequest } from './plan-child';
import type { UnpricedModel } from './plan-load';

/** The plan without its items. */
export type PlanHead = Omit<Plan, 'items'>;

export type PlanChildAnswer =
  | { ok: true; head: PlanHead; digest: string; budgets: CallBudgetsMs; unpriced: UnpricedModel[]; offsets: number[] }
  | { ok: false; message: string; type?: string; nonRetryable: boolean };

/** Stderr of a child that failed, kept for the error. */
const MAX_CHILD_STDERR = 8 * 1024;

export class PlanFile {
  readonly itemCount: number;
  private fd: number | undefined;

  constructor(
    readonly head: PlanHead,
    readonly digest: string,
    readonly budgets: CallBudgetsMs,
    readonly unpriced: UnpricedModel[],
    private readonly offsets: Float64Array,
    fd: number,
  ) {
    this.itemCount = offsets.length - 1;
    this.fd = fd;
  }

  /** Items `offset` to `offset + limit` (fewer at the end). */
  items(offset: number, limit: number): PlanItem[] {
    if (this.fd === undefined) throw new Error('the plan file was closed');
    const from = Math.min(Math.max(offset, 0), this.itemCount);
    const to = Math.min(from + Math.max(limit, 0), this.itemCount);
    const start = this.offsets[from]!;
    const bytes = Buffer.alloc(this.offsets[to]! - start);
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(this.fd, bytes, read, bytes.length - read, start + read);
      if (n === 0) throw new Error('the plan file ended early');
      read += n;
    }
    const text = bytes.toString('utf8');
    return text === ''
      ? []
      : text
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line) as PlanItem);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * Expands the job file in a child process. The items file is unlinked as soon as it is open: it
 * lives as long as this worker holds it, and a killed worker leaves nothing behind.
 */
export async function expandInChild(
  jobFile: string,
  runDate: string,
  inputs: InputsRef | undefined,
  redo?: readonly RedoTake[],
  prices?: PriceTable,
  allowRead?: readonly string[],
): Promise<PlanFile> {
  const dir = mkdtempSync(join(tmpdir(), 'reelflow-plan-'));
  const itemsPath = join(dir, 'items.jsonl');
  try {
    const answer = await askChild({
      jobFile,
      runDate,
      itemsPath,
      ...(inputs ? { inputs } : {}),
      ...(redo ? { redo } : {}),
      ...(prices ? { prices } : {}),
      ...(allowRead?.length ? { allowRead } : {}),
    });
    if (!answer.ok) {
      // A final failure (an invalid job file, stored inputs gone) stays final; anything else may pass.
      const kind = asFailureKind(answer.type);
      if (answer.nonRetryable && kind) throw finalFailure(kind, answer.message);
      throw new Error(answer.message);
    }
    const fd = openSync(itemsPath, 'r');
    unlinkSync(itemsPath);
    return new PlanFile(answer.head, answer.digest, answer.budgets, answer.unpriced, Float64Array.from(answer.offsets), fd);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function askChild(request: PlanChildRequest): Promise<PlanChildAnswer> {
  // From the sources (tests, tsx) the child runs through the same loader as this process.
  const childPath = join(__dirname, `plan-child${extname(__filename)}`);
  const execArgv = process.execArgv.filter((arg) => !arg.startsWith('--test') && !arg.startsWith('--inspect'));
  const child = fork(childPath, [], { execArgv, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < MAX_CHILD_STDERR) stderr += chunk.slice(0, MAX_CHILD_STDERR - stderr.length);
  });
  return new Promise((resolve, reject) => {
    let answer: PlanChildAnswer | undefined;
    child.once('message', (message) => (answer = message as PlanChildAnswer));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (answer) resolve(answer);
      else reject(new Error(`expanding the job file failed (exit ${signal ?? String(code)}): ${stderr.trim() || 'no output'}`));
    });
    child.send(request);
  });
}
