// status, results and cancel: looking at and steering jobs that exist, through the client module
// (client/): this file parses arguments and prints.
import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import { itemStatuses, jobProgress, jobResult, jobTaskQueue, recentJobs, requestCancel } from '../../client/control';
import { jobHandle, loadJobPlan, resolveJob, type JobRef } from '../../client/jobs';
import { isRunning } from '../../client/status';
import { deliveriesOfJob, deliveryLines } from '../../client/deliveries';
import { END_STATES } from '../../domain/end-states';
import type { ManifestRow } from '../../storage/manifest/row';
import type { BlockedItem, JobResult, RenderStatus } from '../../workflows/types';
import { boundedList, waitingFromRows } from '../chain-lines';
import { WorkflowNotFoundError } from '@temporalio/client';
import { NeverRunError, UsageError } from '../errors';
import { detachedWorkerAlive } from '../../client/detached-worker';
import { jobStanding, lookUpJob } from '../../client/job-outcome';
import type { EndedStatus, JobList, RunningStatus, UnansweredStatus } from '../json-outputs';
import { createOutput, type Output } from '../output';
import { formatBytes } from '../../client/format';
import { terminalColumns } from './enhance';
import { withRewrites } from '../../client/enhance';
import { withReplacedPaidRows } from '../../client/paid-rows';
import { csvCell, displayWidth, fitWidth, padToWidth, plainText } from '../../client/terminal-text';
import { ProgressView, summaryLine } from '../progress';
import { openSession } from '../../client/session';
import { firstRunIdOf, ownedJob, type OwnedJob } from '../../worker/owned-job';
import { TASK_QUEUE, isRunTaskQueue } from '../../client/task-queue';
import { describeOutcome, describeStop } from '../../client/summary';
import { openStorage } from '../../storage';
import { keptFilesOf, keptFilmsOf, rowsWithTakes, stateWithPick, type TakeRow } from '../../client/takes-view';
import { printKept } from '../kept';
import { rowCostText, rowRewriteCostText, rowTotalUsd, spendSoFar, spendSummaryLines } from '../../client/spend';

/** How long after its start a job without an answering worker is said to be starting, not missing. */
const WORKER_GRACE_MS = 30_000;
/** How long status waits for a worker to answer the progress query. */
const QUERY_WAIT_MS = 5_000;

export function registerOperateCommands(program: Command): void {
  program
    .command('status')
    .description('progress of one job, or a table of recent jobs')
    .argument('[job]', 'job file or job id')
    .option('--watch', 'keep it live until the job ends')
    .option('--json', 'one JSON document on stdout')
    .option('--limit <n>', 'the table of recent jobs: how many, newest first', '20')
    .action(async (target: string | undefined, options: { watch?: boolean; json?: boolean; limit: string }) => {
      const out = createOutput(!!options.json);
      const limit = Number(options.limit);
      if (!Number.isInteger(limit) || limit < 1)
        throw new UsageError(`--limit must be a whole number of at least 1, got "${options.limit}"`);
      const session = await openSession();
      try {
        if (!target) return await listJobs(session.client, out, limit);
        const job = await resolveJob(session.client, target);
        if (job.note) out.note(job.note);
        // Watching on a terminal redraws one frame in place, as run does; otherwise one snapshot per round.
        const view = options.watch && !out.json && process.stderr.isTTY ? new ProgressView(session.client, true) : undefined;
        try {
          for (;;) {
            const done = await showStatus(session.client, job, target, out, !!options.watch, view);
            if (done || !options.watch) break;
            await new Promise((r) => setTimeout(r, view ? 1_000 : 2_000));
          }
        } finally {
          view?.clear();
        }
      } catch (error) {
        // --json always prints JSON: a job never run is a document too (the sentence goes to stderr).
        if (error instanceof NeverRunError && out.json) out.result(error.toJSON());
        throw error;
      } finally {
        await session.close();
      }
    });

  program
    .command('results')
    .description('one row per item: state, model, file, size, error (json and csv: also task id, base address, polls, sha256, prompts)')
    .argument('<job>', 'job file or job id')
    .option('--format <format>', 'table | json | csv', 'table')
    .option(
      '--kept',
      "the kept takes' files (picks.jsonl) and the assembled films, one path per line; --format json: as JSON (docs/takes.md, docs/chains.md)",
    )
    .option('--state <states>', `only items in these end states, comma-separated (${END_STATES.join(', ')})`)
    .option('--model <models>', 'only items of these models, comma-separated')
    .option('--id <ids>', 'only these items, by id or key, comma-separated')
    .action(async (target: string, options: ResultsOptions) => {
      if (!['table', 'json', 'csv'].includes(options.format)) {
        throw new UsageError(`--format must be table, json or csv, got "${options.format}"`);
      }
      const keep = rowFilter(options);
      let standing;
      try {
        standing = await lookUpJob(target);
      } catch (error) {
        if (error instanceof NeverRunError && options.format === 'json')
          process.stdout.write(`${JSON.stringify(error.toJSON(), null, 2)}\n`);
        throw error;
      }
      const { plan, outcome } = standing;
      // The rewrite beside the prompt: what the render sent, else the stored one (docs/enhance.md).
      // takes (docs/takes.md): every take beside its item, with its pick; --kept lists the kept files.
      const storage = openStorage(plan.output);
      if (options.kept) return printKept(await keptFilesOf(storage), options.format, await keptFilmsOf(storage));
      const all = await rowsWithTakes(plan, await withRewrites(plan, outcome.rows), storage);
      const rows = all.filter(keep);
      const filtered = rows.length !== all.length;
      // csv and json: every paid run has a row, so their costs add up to the spend below (client/paid-rows.ts).
      const paid = () => withReplacedPaidRows(all, outcome.everyRow ?? outcome.rows).filter(keep);
      if (options.format === 'json') process.stdout.write(`${JSON.stringify(paid(), null, 2)}\n`);
      else if (options.format === 'csv') process.stdout.write(toCsv(paid()));
      else {
        process.stdout.write(toTable(rows, filtered ? 0 : outcome.missing.length, terminalColumns()));
        // Items without a row that wait on others (a job running, or stopped before its chain went on).
        const waiting = waitingFromRows(plan.items, new Map(all.map((r) => [r.key, r])));
        const line = boundedList(
          'waiting',
          waiting.map((w) => `${w.key} (on ${w.waitsOn})`),
          waiting.length,
          terminalColumns(),
        );
        if (line && !filtered) process.stdout.write(`${line}\n`);
      }
      // Spent vs estimated, per model and in total (docs/costs.md): after the table; csv and json keep stdout to their format.
      const spent = spendSummaryLines(outcome.spend).join('\n');
      if (spent) (options.format === 'table' ? process.stdout : process.stderr).write(`${spent}\n`);
    });

  program
    .command('cancel')
    .description('stop a job: no new creations, polling ends, in-flight items end as canceled')
    .argument('<job>', 'job file or job id')
    .option('--no-wait', 'return once the cancel is requested')
    .action(async (target: string, options: { wait: boolean }) => {
      // The embedded server has no other worker: run one so in-flight items can record `canceled`. It
      // polls the job's own queue: a job `run` started is on a queue of its own (client/task-queue.ts).
      // That worker carries the job being canceled and nothing else (worker/owned-job.ts).
      let resolved: JobRef | undefined;
      let owned: OwnedJob | undefined;
      const session = await openSession({
        worker: true,
        workerTaskQueue: async (client) => {
          resolved = await resolveJob(client, target);
          const firstRunId = await firstRunIdOf(client, resolved.workflowId).catch(() => undefined);
          if (firstRunId) owned = ownedJob(resolved.workflowId, firstRunId);
          return jobTaskQueue(client, resolved.workflowId, TASK_QUEUE);
        },
        // A job not found has no run: its worker then carries nothing at all.
        ownedJob: () => owned ?? ownedJob(resolved?.workflowId ?? target, ''),
      });
      try {
        const job = resolved ?? (await resolveJob(session.client, target));
        const asked = await requestCancel(session.client, job.workflowId);
        if (!asked.requested) {
          process.stderr.write(`${job.workflowId} is not running (${asked.state}): nothing to cancel\n`);
          return;
        }
        process.stderr.write(`${job.workflowId}: cancel requested; no new creations, in-flight items end as canceled\n`);
        if (!options.wait) return;
        await jobResult(session.client, job.workflowId);
        // How it stopped, from the same answer as status and results: the items' rows.
        const { outcome } = await jobStanding(session.client, job, await loadJobPlan(job), target);
        process.stderr.write(`${job.workflowId}: stopped (${outcome.counts.canceled} canceled, ${outcome.counts.succeeded} succeeded)\n`);
      } finally {
        await session.close();
      }
    });
}

interface ResultsOptions {
  format: string;
  kept?: boolean;
  state?: string;
  model?: string;
  id?: string;
}

function listOption(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  return text
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/** The rows `--state`, `--model` and `--id` keep (all of them without a filter). A state not known is bad usage. */
export function rowFilter(options: Pick<ResultsOptions, 'state' | 'model' | 'id'>): (row: ManifestRow) => boolean {
  const states = listOption(options.state);
  for (const state of states ?? []) {
    if (!(END_STATES as readonly string[]).includes(state))
      throw new UsageError(`--state ${state}: an item ends ${END_STATES.join(', ')}; give one or more of those, comma-separated`);
  }
  const models = listOption(options.model);
  const ids = listOption(options.id);
  return (row) =>
    (!states || states.includes(row.state)) &&
    (!models || models.includes(row.model)) &&
    (!ids || ids.includes(row.key) || (row.id !== null && ids.includes(row.id)));
}

/** A job's row in the table of recent jobs. */
export interface JobListRow {
  id: string;
  /** How it ended (or `running`): completed, canceled, `stopped: CAUSE`, `completed: N of M not succeeded`, failed, terminated, timed_out. */
  end: string;
  succeeded: number | null;
  items: number | null;
  started: string;
  closed: string | null;
}

async function listJobs(client: Client, out: Output, limit: number): Promise<void> {
  const { runs, total } = await recentJobs(client, limit);
  const jobs: JobListRow[] = runs.map((run) => ({
    id: run.workflowId,
    end: run.result ? jobEnd(run.result) : run.state,
    succeeded: run.result?.counts.succeeded ?? null,
    items: run.result?.total ?? null,
    started: run.startTime.toISOString(),
    closed: run.closeTime?.toISOString() ?? null,
  }));
  if (out.json) return out.result({ jobs, shown: jobs.length, total } satisfies JobList);
  if (jobs.length === 0) return out.line('no jobs yet: start one with `reelflow run JOB.yaml`');
  for (const line of jobTable(jobs, terminalColumns())) out.line(line);
  if (total > jobs.length) out.line(`${jobs.length} of ${total} shown (--limit ${total} for all)`);
}

/** How a completed job ended, in a few words. */
export function jobEnd(result: JobResult): string {
  if (result.canceled) return 'canceled';
  if (result.stoppedBy) return `stopped: ${result.stoppedBy.kind}`;
  if (result.fatal) return 'stopped';
  const notSucceeded = result.total - result.counts.succeeded;
  return notSucceeded > 0 ? `completed: ${notSucceeded} of ${result.total} not succeeded` : 'completed';
}

/** The table of recent jobs, within `columns`: a long id is cut (with …) before the other columns are. */
export function jobTable(jobs: readonly JobListRow[], columns: number): string[] {
  const started = (j: JobListRow) => j.started.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  const endWidth = Math.min(40, Math.max(6, ...jobs.map((j) => displayWidth(plainText(j.end)))));
  const startedWidth = 20;
  const idRoom = Math.max(12, columns - 1 - endWidth - startedWidth - 4);
  const idWidth = Math.min(idRoom, Math.max(3, ...jobs.map((j) => displayWidth(plainText(j.id)))));
  const row = (id: string, end: string, when: string) =>
    `${padToWidth(fitWidth(plainText(id), idWidth), idWidth)}  ${padToWidth(fitWidth(plainText(end), endWidth), endWidth)}  ${when}`;
  return [row('JOB', 'END', 'STARTED'), ...jobs.map((j) => row(j.id, j.end, started(j)))];
}

/**
 * Prints one snapshot; true when the job has ended. A job with no workflow and no row was never run
 * (NeverRunError); one with rows that Temporal no longer holds is `forgotten`, told by its rows. An
 * ended job is told from its standing (client/job-outcome.ts): its items' rows and
 * how its workflow stopped, its plan read as the workflow ran it (any machine can look). A running
 * job whose progress no worker answers gets a grace: within its first 30 s, or while the worker
 * `run --detach` spawned is alive, its worker is starting, not missing.
 */
async function showStatus(
  client: Client,
  job: JobRef,
  target: string,
  out: Output,
  watching: boolean,
  view: ProgressView | undefined,
): Promise<boolean> {
  const { workflowId } = job;
  const described = await jobHandle(client, workflowId)
    .describe()
    .catch((error: unknown) => {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    });
  if (!described || !isRunning(described)) {
    view?.clear();
    const standing = await jobStanding(client, job, await loadJobPlan(job), target);
    const { outcome, result } = standing;
    const { not_rendered: notRendered, ...ended } = outcome.counts;
    const counts = { pending: notRendered, creating: 0, rendering: 0, downloading: 0, ...ended };
    if (out.json) {
      out.result({
        job: outcome.job,
        state: standing.state,
        counts,
        items: outcome.items,
        canceled: result?.canceled ?? false,
        stoppedBy: result?.stoppedBy ?? null,
        spend: outcome.spend ?? null,
        ...(outcome.runSpend ? { last_run_spend: outcome.runSpend } : {}),
        ...blockedOf(outcome.rows),
      } satisfies EndedStatus);
    } else {
      if (result?.stoppedBy)
        for (const line of describeStop(result.stoppedBy, `reelflow run ${job.jobFile}`, result.notStarted ?? 0)) out.line(line);
      if (result?.canceled) out.line('the job was canceled');
      for (const line of describeOutcome(outcome, job.jobFile, undefined, 'last run:')) out.line(line);
      const deliveries = await deliveriesOfJob(client, workflowId, standing.plan.notify);
      for (const line of deliveryLines(deliveries)) out.line(plainText(line));
      // Deliveries left on an ended run's own queue need a worker of that queue (docs/notifications.md).
      const open = deliveries.some((d) => d.state === 'pending' || d.state === 'retrying');
      if (open && described && isRunTaskQueue(described.taskQueue) && !detachedWorkerAlive(workflowId, 'deliveries'))
        out.line(`  no worker carries these deliveries now: \`reelflow worker --until-delivered ${workflowId}\` carries them on`);
    }
    return true;
  }
  const askedAt = Date.now();
  // Without a worker a query waits for one: a bound, so that status answers.
  const progress = await jobProgress(client, workflowId, QUERY_WAIT_MS);
  if (!progress) {
    const starting = askedAt - described.startTime.getTime() < WORKER_GRACE_MS || detachedWorkerAlive(workflowId);
    const name = workflowId.replace(/^reelflow-/, '');
    const message = starting
      ? `${workflowId}: running; its worker is starting, progress follows in a moment`
      : `${workflowId}: running, but no worker answers: start one with \`reelflow run JOB.yaml\` or \`reelflow worker\``;
    if (out.json) {
      const unanswered: UnansweredStatus = {
        job: name,
        state: 'running',
        worker: starting ? 'starting' : 'none',
        counts: null,
        items: null,
        message,
      };
      out.result(unanswered);
    } else if (!view) out.line(message);
    return !watching;
  }
  if (view) {
    await view.render(progress);
    return false;
  }
  const statuses = await itemStatuses(client, progress, progress.inFlight.length);
  const phase = (p: RenderStatus['phase']) => statuses.filter((s) => s.phase === p).length;
  const counts = {
    pending: progress.counts.pending,
    creating: phase('creating') + phase('enhancing') + phase('pending'),
    rendering: phase('rendering'),
    downloading: phase('downloading') + phase('recording'),
    succeeded: progress.counts.succeeded,
    failed: progress.counts.failed,
    timed_out: progress.counts.timed_out,
    canceled: progress.counts.canceled,
    unknown: progress.counts.unknown,
    ...(progress.counts.blocked ? { blocked: progress.counts.blocked } : {}),
    skipped: progress.counts.skipped,
  };
  // One read of the plan a round (a large job's plan takes seconds): its spend and its targets.
  const { plan } = await loadJobPlan(job);
  const spend = await spendSoFar(plan);
  // Which shot waits on which, which are blocked and why (docs/chains.md); absent for a job without chains.
  const waiting = progress.waiting ?? [];
  const blocked = progress.blocked ?? [];
  if (out.json)
    out.result({
      job: progress.job,
      state: progress.state,
      counts,
      items: progress.total,
      spend: spend ?? null,
      ...(waiting.length ? { waiting: waiting.map((w) => ({ key: w.key, waits_on: w.waitsOn })) } : {}),
      ...(blocked.length ? { blocked: blocked.map((b) => ({ key: b.key, blocked_by: b.blockedBy, why: b.why })) } : {}),
    } satisfies RunningStatus);
  else {
    out.line(summaryLine(progress));
    out.line(
      `  creating ${counts.creating}, rendering ${counts.rendering}, downloading ${counts.downloading}, not started ${counts.pending}`,
    );
    for (const line of spendSummaryLines(spend)) out.line(line);
    // Blocked items are told below with the need that blocked them, not among the failures.
    for (const f of progress.recentFailures.filter((f) => f.state !== 'blocked').slice(-5))
      out.line(`  ${f.state} #${f.index} ${plainText(f.key)}: ${plainText(f.error?.message ?? '')}`);
    for (const line of chainStatusLines(waiting, blocked, progress.counts.blocked ?? 0)) out.line(line);
    for (const line of deliveryLines(await deliveriesOfJob(client, workflowId, plan.notify))) out.line(plainText(line));
  }
  return false;
}

/** At most this many items of each kind in `status`: the rest are counted (a chain may be long). */
const CHAIN_LINES = 5;

/** `status` of a running job: the shots that wait and on what, the blocked ones and why (docs/chains.md). */
function chainStatusLines(
  waiting: ReadonlyArray<{ key: string; waitsOn: string }>,
  blocked: readonly BlockedItem[],
  blockedCount: number,
): string[] {
  const lines = waiting.slice(0, CHAIN_LINES).map((w) => `  waiting ${plainText(w.key)}: on ${plainText(w.waitsOn)}`);
  if (waiting.length > CHAIN_LINES) lines.push(`  … and ${waiting.length - CHAIN_LINES} more waiting`);
  const latest = blocked.slice(-CHAIN_LINES).reverse();
  lines.push(...latest.map((b) => `  blocked ${plainText(b.key)}: ${plainText(b.why)}`));
  if (blockedCount > latest.length) lines.push(`  … and ${blockedCount - latest.length} more blocked`);
  return lines;
}

/** An ended job's blocked items with their need and why, from their rows; nothing for a job without. */
function blockedOf(rows: readonly ManifestRow[]): { blocked?: Array<{ key: string; blocked_by: string | null; why: string }> } {
  const blocked = rows.filter((r) => r.state === 'blocked');
  if (blocked.length === 0) return {};
  return { blocked: blocked.map((r) => ({ key: r.key, blocked_by: r.blocked_by ?? null, why: r.error?.message ?? '' })) };
}

const COLUMNS = [
  'index',
  'key',
  'state',
  'model',
  'task_id',
  'base_url',
  'polls',
  'file',
  'bytes',
  'sha256',
  'error',
  'blocked_by',
  'replaced',
  'prompt',
  'enhanced_prompt',
  'cost_usd',
  'cost_source',
  'rewrite_cost_usd',
  'rewrite_cost_source',
  'total_cost_usd',
] as const;

function cell(row: ManifestRow & { replaced?: true }, column: (typeof COLUMNS)[number]): string {
  // A paid run a later row of its item replaced (client/paid-rows.ts).
  if (column === 'replaced') return row.replaced ? 'true' : '';
  if (column === 'error') return row.error ? `${row.error.kind}: ${row.error.message}` : '';
  // The item's whole cost: its create's and its prompt rewrite's (docs/costs.md).
  if (column === 'total_cost_usd') return String(rowTotalUsd(row) ?? '');
  const value = row[column];
  return value === null || value === undefined ? '' : String(value);
}

export function toCsv(rows: ReadonlyArray<ManifestRow & { replaced?: true }>): string {
  return [COLUMNS.join(','), ...rows.map((r) => COLUMNS.map((c) => csvCell(cell(r, c))).join(','))].join('\n') + '\n';
}

/** A column of the results table: its heading, its cell, the widest it gets, and whether it gives way to others. */
interface TableColumn {
  head: string;
  value: (row: TakeRow) => string;
  max: number;
  /** Cut further (down to MIN_CUT) when the table does not fit. */
  shrinks?: boolean;
  /** Shown only when the terminal has room for it. */
  optional?: boolean;
  /** Shown only when some row has something to show in it. */
  shownFor?: (row: TakeRow) => boolean;
}

/** The narrowest a shrinking column is cut to, and the most room the error column is given before others shrink. */
const MIN_CUT = 10;
const ERROR_ROOM = 48;
const TABLE: readonly TableColumn[] = [
  { head: '#', value: (r) => `#${r.index}`, max: 8 },
  { head: 'KEY', value: (r) => r.key, max: 28, shrinks: true },
  { head: 'STATE', value: stateWithPick, max: 18 },
  { head: 'MODEL', value: (r) => r.model, max: 28, shrinks: true },
  { head: 'TASK', value: (r) => r.task_id ?? '-', max: 40, shrinks: true },
  { head: 'FILE', value: (r) => r.file ?? '-', max: 40, shrinks: true },
  { head: 'SIZE', value: (r) => (r.bytes !== null ? formatBytes(r.bytes) : '-'), max: 10 },
  // What the item cost, its create and its prompt rewrite (docs/costs.md): shown whenever a row
  // records one, the money is what users watch; the rewrite's part beside it where there is one.
  { head: 'COST', value: rowCostText, max: 13, shownFor: (r) => rowTotalUsd(r) !== undefined },
  { head: 'REWRITE', value: rowRewriteCostText, max: 14, shownFor: (r) => r.rewrite_cost_usd !== undefined },
  { head: 'POLLS', value: (r) => String(r.polls), max: 6, optional: true },
  { head: 'BASE', value: (r) => r.base_url ?? '-', max: 40, optional: true },
  { head: 'SHA256', value: (r) => (r.sha256 ? r.sha256.slice(0, 12) : '-'), max: 12, optional: true },
];

/**
 * The widths of the table's columns within `columns`: each as wide as its widest cell (up to its
 * max); the shrinking ones cut, widest first, until the error column (`errorWidth`: its widest
 * message, 0 without errors) has its room; the optional ones added only where they still fit.
 * 0: the column is left out.
 */
export function tableWidths(natural: readonly number[], columns: number, errorWidth: number): number[] {
  const widths = TABLE.map((c, i) => (c.optional ? 0 : Math.min(c.max, natural[i]!)));
  const used = () => widths.reduce((sum, w) => sum + (w > 0 ? w + 2 : 0), 0) + Math.min(errorWidth, ERROR_ROOM);
  while (used() > columns) {
    let widest = -1;
    TABLE.forEach((c, i) => {
      if (c.shrinks && widths[i]! > MIN_CUT && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
    });
    if (widest < 0) break;
    widths[widest]!--;
  }
  TABLE.forEach((c, i) => {
    if (!c.optional) return;
    const width = Math.min(c.max, natural[i]!);
    if (used() + width + 2 + Math.max(0, errorWidth - ERROR_ROOM) <= columns) widths[i] = width;
  });
  return widths;
}

/**
 * The results table within `columns` (the CSV and JSON have every value whole): one line per item;
 * its error last on the line when it fits there, else on the next line; then, for an enhanced
 * item, its prompt and rewrite.
 */
export function toTable(rows: readonly TakeRow[], missing: number, columns: number): string {
  const cells = rows.map((r) => TABLE.map((c) => plainText(c.value(r))));
  // 0: a column no row has anything for is left out (tableWidths).
  const natural = TABLE.map((c, i) =>
    c.shownFor && !rows.some(c.shownFor) ? 0 : Math.max(c.head.length, ...cells.map((l) => displayWidth(l[i]!))),
  );
  const errors = rows.map((r) => (r.error ? plainText(`${r.error.kind}: ${r.error.message}`) : ''));
  const errorWidth = Math.max(0, ...errors.map((e) => displayWidth(e)));
  const widths = tableWidths(natural, columns, errorWidth);
  const fmt = (line: readonly string[], error: string) =>
    [...line.flatMap((v, i) => (widths[i]! > 0 ? [padToWidth(fitWidth(v, widths[i]!), widths[i]!)] : [])), error].join('  ').trimEnd();
  const below = (label: string, text: string) => fitWidth(`    ${label.padEnd(8)} ${text}`, columns);
  const tail = missing ? `\n${missing} item(s) of the plan have no result yet\n` : '\n';
  const lines = [
    fitWidth(
      fmt(
        TABLE.map((c) => c.head),
        errorWidth > 0 ? 'ERROR' : '',
      ),
      columns,
    ),
  ];
  rows.forEach((r, i) => {
    const inline = fmt(cells[i]!, errors[i]!);
    if (displayWidth(inline) <= columns) lines.push(inline);
    else lines.push(fitWidth(fmt(cells[i]!, ''), columns), below('error:', errors[i]!));
    // An enhanced item's prompt and rewrite follow its row, each on a line cut to the terminal.
    if (r.enhanced_prompt) lines.push(below('prompt:', plainText(r.prompt)), below('rewrite:', plainText(r.enhanced_prompt)));
  });
  return lines.join('\n') + tail;
}
