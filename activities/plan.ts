// Plan activities: the worker reads the job file (and its local files) itself, so workflow history
// carries only the settings and one page of items at a time. A job whose inputs were stored
// (activities/inputs.ts) is read from their fetched copies, under the same paths.
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { ApplicationFailure } from '@temporalio/activity';
import { dateIn, loadJobFile } from '../jobfile';
import type { OutputSettings, Plan, PlanItem } from '../jobfile/plan';
import { InputDigestError, InputMissingError, type InputsRef } from '../storage/inputs';
import { itemIsDone, type ItemEndState, type ManifestRow } from '../storage/manifest';
import type { ManifestCursor, Storage } from '../storage/storage';
import { storageFor } from './context';
import { FailureType } from './failure-types';
import { storedJobFiles, type JobSettingsWithInputs } from './inputs';

export interface PreparedJob {
  /** With the job's stored inputs, when it has them: its items' creates fetch their references there. */
  settings: JobSettingsWithInputs;
  runDate: string;
  /** Digest of the expanded plan: pages are read against it, so an edited job file is noticed. */
  digest: string;
  itemCount: number;
}

const plans = new Map<string, { plan: Plan; digest: string }>();

/**
 * The latest manifest row per key of one output location, kept between pages and brought up to
 * date with only the rows appended since (reading the whole manifest for every page of 100 items
 * made a job's reads quadratic). One location at a time, like the plan cache; calls take turns.
 */
class ManifestFollower {
  private followed: { location: string; cursor: ManifestCursor | undefined; rows: Map<string, ManifestRow> } | undefined;
  private turn: Promise<unknown> = Promise.resolve();

  latest(storage: Storage): Promise<ReadonlyMap<string, ManifestRow>> {
    const next = this.turn.then(() => this.catchUp(storage));
    this.turn = next.catch(() => undefined);
    return next;
  }

  private async catchUp(storage: Storage): Promise<ReadonlyMap<string, ManifestRow>> {
    const known = this.followed?.location === storage.location ? this.followed : undefined;
    const page = await storage.readManifestSince(known?.cursor);
    // A new map, never a cleared one: a caller may still be reading the previous one. The map in
    // use only ever gains newer rows.
    const followed = known && !page.fromStart ? known : { location: storage.location, cursor: undefined, rows: new Map() };
    for (const row of page.rows) followed.rows.set(row.key, row);
    followed.cursor = page.cursor;
    this.followed = followed;
    return followed.rows;
  }
}

const manifestFollower = new ManifestFollower();

export function planDigest(plan: Plan): string {
  return createHash('sha256').update(JSON.stringify(plan.items)).digest('hex').slice(0, 16);
}

async function loadPlan(jobFile: string, runDate: string, inputs: InputsRef | undefined): Promise<{ plan: Plan; digest: string }> {
  // Stored inputs never change under their digest. A path's plan stands while the file is
  // unchanged (same size and modification time), so an edit during a run is still caught by the
  // digest check of readPlanItems.
  const version = inputs
    ? `inputs:${inputs.index}`
    : await stat(jobFile).then(
        (st) => `${st.size}:${st.mtimeMs}`,
        () => 'missing',
      );
  const cacheKey = `${jobFile}\u0000${runDate}\u0000${version}`;
  const cached = plans.get(cacheKey);
  if (cached) return cached;
  const stored = inputs ? await storedJobFiles(inputs).catch(finalWhenGone) : undefined;
  const result = await loadJobFile(stored?.jobFile ?? jobFile, { runDate, files: stored?.files });
  if (!result.ok) {
    const lines = result.errors.slice(0, 10).map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`);
    throw ApplicationFailure.create({
      type: FailureType.jobFileInvalid,
      nonRetryable: true,
      message: `the job file is not valid:\n${lines.join('\n')}`,
    });
  }
  const entry = { plan: result.plan, digest: planDigest(result.plan) };
  plans.clear(); // one plan at a time is what a worker needs; keeps memory flat for 10k-item jobs
  plans.set(cacheKey, entry);
  return entry;
}

/** Stored inputs that are gone or wrong stay so: fail at once instead of retrying. */
function finalWhenGone(error: unknown): never {
  if (error instanceof InputMissingError || error instanceof InputDigestError) {
    throw ApplicationFailure.create({ type: FailureType.storage, nonRetryable: true, message: error.message });
  }
  throw error;
}

export async function preparePlan(input: {
  jobFile: string;
  runDate?: string;
  startedAt: number;
  inputs?: InputsRef;
  keyFingerprint?: string;
}): Promise<PreparedJob> {
  // Scheduled runs carry no date: the first load learns the schedule's zone, the second dates it.
  let runDate = input.runDate;
  if (!runDate) {
    const probe = await loadPlan(input.jobFile, dateIn(input.startedAt, 'UTC'), input.inputs);
    runDate = dateIn(input.startedAt, probe.plan.schedule?.timezone ?? 'UTC');
  }
  const { plan, digest } = await loadPlan(input.jobFile, runDate, input.inputs);
  const { jobFile: _f, runDate: _d, items, warnings: _w, ...settings } = plan;
  const carried = {
    ...(input.inputs ? { inputs: input.inputs } : {}),
    ...(input.keyFingerprint ? { keyFingerprint: input.keyFingerprint } : {}),
  };
  return { settings: { ...settings, ...carried }, runDate, digest, itemCount: items.length };
}

/**
 * One page of the plan, without the items that are already done: a succeeded output still present
 * in storage, or an item that ended in a state the user did not ask to retry. A canceled item is
 * not done: running the job again continues it.
 */
export async function readPlanItems(input: {
  jobFile: string;
  runDate: string;
  digest: string;
  offset: number;
  limit: number;
  retryStates: ItemEndState[];
  output: OutputSettings;
  /** The job's stored inputs; absent: the job file is read at its path. */
  inputs?: InputsRef;
}): Promise<{ items: PlanItem[]; nextOffset: number }> {
  const { plan, digest } = await loadPlan(input.jobFile, input.runDate, input.inputs);
  if (digest !== input.digest) {
    throw ApplicationFailure.create({
      type: FailureType.jobFileChanged,
      nonRetryable: true,
      message: input.inputs
        ? // The stored files cannot change: only a worker that expands them differently (another version) can.
          `${input.jobFile}: the job's stored files expand to another plan on this worker than when the job started (another reelflow version?): run the job again`
        : `${input.jobFile} changed while its job was running: cancel the job (reelflow cancel) and run it again`,
    });
  }
  const page = plan.items.slice(input.offset, input.offset + input.limit);
  const storage = storageFor(input.output);
  const latest = await manifestFollower.latest(storage);
  const retry = new Set<ItemEndState>(input.retryStates);
  const todo: PlanItem[] = [];
  for (const item of page) {
    const row = latest.get(item.key);
    const stored = row?.state === 'succeeded' && row.file ? await storage.stat(row.file) : undefined;
    if (!itemIsDone(row, retry, stored)) todo.push(item);
  }
  return { items: todo, nextOffset: input.offset + page.length };
}
