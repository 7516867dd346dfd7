// The end of a run, read from the manifest: the latest row per item of the plan.
import type { FilmResult } from '../workflows/assemble';
import { requestDigest } from '../activities/plan';
import { localReferenceDigests, type ReferenceDigests } from '../activities/reference-digests';
import type { Plan, PlanItem } from '../jobfile/plan';
import type { ItemEndState, RenderEndState } from '../domain/end-states';
import { itemIsDone, latestRowByKey, requestChanged, type ManifestRow } from '../storage/manifest/row';
import type { StoredObject } from '../storage/objects/store';
import type { JobResult, JobStopCause } from '../workflows/types';
import { openStorage } from '../storage';
import { estimatePlan } from './estimate';
import { createChargeText, runSpendLines, spendLines, spendOf, spendSince, unrecordedRewriteCalls, type JobSpend } from './spend';
import { color, formatBytes } from './format';
import { plainText } from './terminal-text';
import { readManifestRows } from './manifest-rows';
import { takesMadeByRedo } from './takes-view';

export interface JobOutcome {
  job: string;
  items: number;
  location: string;
  /** `blocked`: items a need of which did not succeed (docs/chains.md); absent where none could be. */
  counts: Record<RenderEndState | 'not_rendered', number> & { blocked?: number };
  bytes: number;
  rows: ManifestRow[];
  /** Items of the plan without a final row (a canceled job's items never started). */
  missing: string[];
  /** Items whose request changed since their latest row: a run renders them again (docs/reruns.md). */
  changed: string[];
  /** What every run of the job spent, beside the plan's estimate (docs/costs.md); absent with no price and no cost. */
  spend?: JobSpend;
  /**
   * What this run spent, when runs before it paid too (client/spend.ts spendSince): the end of `run`
   * says it and the job's apart. Absent when this run's spend is the job's.
   */
  runSpend?: JobSpend;
  /** Every row of the manifest, each run of each item (the ledger the spend is computed from). */
  everyRow?: ManifestRow[];
}

/**
 * `referenceDigests`: how local references' contents are known (a job's stored inputs, client/jobs.ts).
 * `runStartedAt`: the start of the run whose end this is (JobResult startedAt), to tell its spend apart.
 */
export async function readOutcome(
  plan: Plan,
  referenceDigests: ReferenceDigests = localReferenceDigests,
  runStartedAt?: number,
): Promise<JobOutcome> {
  const storage = openStorage(plan.output);
  const everyRow = await readManifestRows(storage);
  const latest = latestRowByKey(everyRow);
  const counts: JobOutcome['counts'] = { succeeded: 0, failed: 0, timed_out: 0, canceled: 0, unknown: 0, blocked: 0, not_rendered: 0 };
  const rows: ManifestRow[] = [];
  const missing: string[] = [];
  const changed: string[] = [];
  let bytes = 0;
  for (const item of plan.items) {
    const row = latest.get(item.key);
    if (!row) {
      counts.not_rendered++;
      missing.push(item.key);
      continue;
    }
    if (requestChanged(row, item.request, await requestDigest(item.request, plan.jobFile, referenceDigests))) changed.push(item.key);
    counts[row.state] = (counts[row.state] ?? 0) + 1;
    bytes += row.bytes ?? 0;
    rows.push(row);
  }
  // The takes redo runs made for the plan's items are the job's too: "36 of 36" when 40 takes exist
  // hid 4 of them. A redo run's own plan names its takes alone, and its outcome is theirs.
  if (!plan.items.some((item) => item.redoOf !== undefined)) {
    for (const row of takesMadeByRedo(plan, latest)) {
      counts[row.state] = (counts[row.state] ?? 0) + 1;
      bytes += row.bytes ?? 0;
      rows.push(row);
    }
  }
  const calls = await unrecordedRewriteCalls(plan, everyRow);
  const spend = spendOf(everyRow, estimatePlan(plan), calls);
  const runSpend = runStartedAt === undefined ? undefined : spendSince(plan, everyRow, calls, runStartedAt);
  return {
    job: plan.job,
    // The plan's items and the takes redo runs added.
    items: rows.length + missing.length,
    location: storage.location,
    counts,
    bytes,
    rows,
    missing,
    changed,
    ...(spend ? { spend } : {}),
    ...(runSpend ? { runSpend } : {}),
    everyRow,
  };
}

/**
 * The plan's items a run would send now: those its plan pages do not skip as already ended
 * (storage/manifest/row.ts itemIsDone), what `run` says it starts and the dry run prices.
 */
export function itemsToSend(
  plan: Pick<Plan, 'items'>,
  outcome: Pick<JobOutcome, 'rows' | 'changed'>,
  stored: ReadonlyMap<string, StoredObject>,
  retryStates: readonly ItemEndState[],
): PlanItem[] {
  const retry = new Set(retryStates);
  const changed = new Set(outcome.changed);
  const latest = new Map(outcome.rows.map((row) => [row.key, row]));
  return plan.items.filter((item) => {
    const row = latest.get(item.key);
    return !itemIsDone(row, retry, row?.file ? stored.get(row.file) : undefined, changed.has(item.key));
  });
}

/**
 * Exit status per docs/commands.md: 0 when every item succeeded, else 1; a job stopped by a job-wide
 * cause exits with the cause's code (2 model, route or key; 3 no gateway address reachable).
 */
export function exitStatusFor(outcome: JobOutcome, stoppedBy?: JobStopCause): number {
  if (stoppedBy && stoppedBy.exitCode !== 1) return stoppedBy.exitCode;
  return outcome.counts.succeeded === outcome.items ? 0 : 1;
}

/**
 * The items a run left blocked (docs/chains.md): never started, because an item they need did not
 * succeed; a run after the fix (or with --retry-failed) renders them.
 */
export function describeBlocked(result: Pick<JobResult, 'counts' | 'blocked'>, rows: readonly ManifestRow[] = []): string[] {
  const count = result.counts.blocked ?? 0;
  if (count === 0) return [];
  const lines = [color.red(`${count} blocked: a shot they need did not succeed; a run after the fix (--retry-failed) continues the chain`)];
  // Those with a row were told with the outcome (describeOutcome); jobs from before the rows have none.
  const told = new Set(rows.filter((r) => r.state === 'blocked').map((r) => r.key));
  for (const b of result.blocked ?? []) if (!told.has(b.key)) lines.push(`  blocked ${plainText(b.key)}: ${plainText(b.why)}`);
  return lines;
}

/**
 * What a run that stopped early prints first: the cause, what to fix, and that `resume` continues
 * (`reelflow run JOB`, with the run's own `--redo`/`--only`: a plain run leaves their takes alone).
 */
export function describeStop(stoppedBy: JobStopCause, resume: string, notStarted: number): string[] {
  const lines = [color.red(`stopped: ${plainText(stoppedBy.message)}`), `  fix: ${stoppedBy.fix}`];
  if (notStarted > 0) {
    lines.push(
      `  ${notStarted} item(s) were not started; after the fix, \`${resume}\` renders them` +
        ' (items that hold a task ask it first, nothing is paid twice)',
    );
  }
  return lines;
}

/** Blocked items listed by name at the end of a run and in `status`; the rest are counted. */
const BLOCKED_LISTED = 5;

/**
 * `runLabel`: what the run whose part of the spend is told apart is called (`run`'s end: this run;
 * `status`: the last). `resume`: the command that renders what is not rendered yet (describeStop).
 */
export function describeOutcome(
  outcome: JobOutcome,
  jobFile: string,
  elapsedMs?: number,
  runLabel = 'this run:',
  resume = `reelflow run ${jobFile}`,
): string[] {
  const c = outcome.counts;
  const lines: string[] = [];
  const took = elapsedMs !== undefined ? ` in ${(elapsedMs / 1000).toFixed(1)} s` : '';
  const head = `${outcome.job}: ${c.succeeded} of ${outcome.items} succeeded${took} (${formatBytes(outcome.bytes)}) -> ${outcome.location}`;
  lines.push(c.succeeded === outcome.items ? color.green(head) : color.yellow(head));
  const bad = outcome.rows.filter((r) => r.state !== 'succeeded');
  for (const row of bad) {
    if (row.state === 'blocked') continue;
    const reason = row.error ? `${row.error.kind}: ${plainText(row.error.message)}` : row.state;
    const charge = createChargeText(row);
    lines.push(`  ${color.red(row.state.padEnd(9))} #${row.index} ${plainText(row.key)}  ${reason}${charge ? `  (${charge})` : ''}`);
  }
  // A blocked item names the need it waits for (docs/chains.md), as `run` and `status` say it; a
  // long chain's are counted past the first few, not listed.
  const blocked = bad.filter((r) => r.state === 'blocked');
  for (const row of blocked.slice(0, BLOCKED_LISTED))
    lines.push(`  ${color.red('blocked')} ${plainText(row.key)}: ${plainText(row.error?.message ?? `needs ${row.blocked_by ?? '?'}`)}`);
  if (blocked.length > BLOCKED_LISTED) lines.push(`  … and ${blocked.length - BLOCKED_LISTED} more blocked`);
  if (outcome.spend && outcome.runSpend) lines.push(...runSpendLines(outcome.runSpend, outcome.spend, runLabel));
  else if (outcome.spend) lines.push(...spendLines(outcome.spend));
  if (outcome.changed.length)
    lines.push(`  ${outcome.changed.length} item(s) changed since their last render: the next run renders them again`);
  if (outcome.missing.length) lines.push(`  ${outcome.missing.length} item(s) not rendered yet: run \`${resume}\` to continue`);
  if (c.failed || c.timed_out) lines.push(color.dim(`  render failed ones again: reelflow run ${jobFile} --retry-failed`));
  if (c.blocked && !(c.failed || c.timed_out))
    lines.push(color.dim(`  blocked ones start once what they need succeeds: reelflow run ${jobFile} --retry-failed`));
  if (c.unknown) {
    lines.push(
      color.dim(
        `  unknown = the gateway may or may not have started the render (it may be billed): ` +
          `check the gateway's console, then reelflow run ${jobFile} --retry-unknown`,
      ),
    );
  }
  return lines;
}

/** What became of each film of the job's `assemble:` (docs/chains.md), one line each. */
export function describeFilms(films: readonly FilmResult[] | undefined, location: string): string[] {
  return (films ?? []).map((film) => {
    const name = plainText(film.name);
    if ('file' in film) {
      const what = film.state === 'made' ? `made (${film.method === 'stream_copy' ? 'stream copy' : 're-encoded'})` : 'unchanged';
      return `  film ${name}: ${what}, ${film.durationSec.toFixed(1)} s -> ${location.startsWith('s3://') ? location : `${location}/`}${plainText(film.file)}`;
    }
    const why = 'kind' in film ? `${film.kind}: ${film.reason}` : film.reason;
    return color.yellow(`  film ${name}: not made: ${plainText(why)}`);
  });
}

/** What a start renders: every item the job's plan pages will not skip (itemsToSend). */
export function startedNote(
  job: string,
  total: number,
  toRender: number,
  outcome: JobOutcome,
  retryStates: readonly ItemEndState[],
  location: string,
): string {
  const { counts } = outcome;
  const done = total - toRender;
  if (toRender === 0) {
    const again =
      counts.failed + counts.timed_out + counts.unknown > 0 ? ' (--retry-failed / --retry-unknown render ended ones again)' : '';
    return `${job}: nothing to render: all ${total} item(s) already ended${again} -> ${location}`;
  }
  const changed = outcome.changed.length;
  const edited = changed > 0 ? `; ${changed} changed since rendered, rendered again beside the earlier file` : '';
  return `${job}: started ${toRender} of ${total} item(s)${done > 0 ? ` (${done} already ended)` : ''}${edited} -> ${location}`;
}
