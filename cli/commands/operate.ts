// status, results and cancel: looking at and steering jobs that exist.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Command } from 'commander';
import type { ManifestRow } from '../../storage/manifest';
import { JobWorkflow, cancelSignal, progressQuery } from '../../workflows/job';
import type { JobResult, RenderStatus } from '../../workflows/types';
import { NeverRunError, UsageError } from '../errors';
import { detachedWorkerAlive } from '../detached-worker';
import { loadPlanOrExplain, resolveJob } from '../job-ref';
import { createOutput, formatBytes, type Output } from '../output';
import { terminalColumns, withRewrites } from './enhance';
import { csvCell, displayWidth, fitWidth, padToWidth, plainText } from '../terminal-text';
import { itemStatuses, summaryLine } from '../progress';
import { outcomeOfRunJob, planFor } from '../report-target';
import { openSession } from '../session';
import { TASK_QUEUE } from '../task-queue';
import { describeOutcome, readOutcome } from '../summary';
import { openStorage } from '../../storage';
import { keptFiles, printKept, rowsWithTakes, stateWithPick, type TakeRow } from '../takes-view';
import { rowCostText, spendSoFar, spendSummaryLines } from '../spend';

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
        do {
          const done = await showStatus(session.client, job, target, out, !!options.watch);
          if (done || !options.watch) break;
          await new Promise((r) => setTimeout(r, 2_000));
        } while (options.watch);
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
    .description('one row per item: state, model, task id, base address, polls, file, size, sha256, error')
    .argument('<job>', 'job file or job id')
    .option('--format <format>', 'table | json | csv', 'table')
    .option('--kept', "the kept takes' files (picks.jsonl), one path per line; --format json: as JSON (docs/takes.md)")
    .action(async (target: string, options: { format: string; kept?: boolean }) => {
      if (!['table', 'json', 'csv'].includes(options.format)) {
        throw new UsageError(`--format must be table, json or csv, got "${options.format}"`);
      }
      const plan = await planFor(target);
      let outcome;
      try {
        outcome = await outcomeOfRunJob(plan, target);
      } catch (error) {
        if (error instanceof NeverRunError && options.format === 'json')
          process.stdout.write(`${JSON.stringify(error.toJSON(), null, 2)}\n`);
        throw error;
      }
      // The rewrite beside the prompt: what the render sent, else the stored one (docs/enhance.md).
      // takes (issue 26): every take beside its item, with its pick; --kept lists the kept files.
      const storage = openStorage(plan.output);
      const rows = await rowsWithTakes(plan, await withRewrites(plan, outcome.rows), storage);
      if (options.kept) return printKept(keptFiles(rows, storage.location), options.format);
      if (options.format === 'json') process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      else if (options.format === 'csv') process.stdout.write(toCsv(rows));
      else process.stdout.write(toTable(rows, outcome.missing.length, terminalColumns()));
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
      // polls the job's own queue: a job `run` started is on a queue of its own (cli/task-queue.ts).
      let resolved: Awaited<ReturnType<typeof resolveJob>> | undefined;
      const session = await openSession({
        worker: true,
        workerTaskQueue: async (client) => {
          resolved = await resolveJob(client, target);
          return client.workflow
            .getHandle(resolved.workflowId)
            .describe()
            .then(
              (d) => d.taskQueue,
              () => TASK_QUEUE,
            );
        },
      });
      try {
        const job = resolved ?? (await resolveJob(session.client, target));
        const handle = session.client.workflow.getHandle<typeof JobWorkflow>(job.workflowId);
        const described = await handle.describe();
        if (described.status.name !== 'RUNNING') {
          process.stderr.write(`${job.workflowId} is not running (${described.status.name.toLowerCase()}): nothing to cancel\n`);
          return;
        }
        await handle.signal(cancelSignal);
        process.stderr.write(`${job.workflowId}: cancel requested; no new creations, in-flight items end as canceled\n`);
        if (!options.wait) return;
        const result = await handle.result();
        process.stderr.write(`${job.workflowId}: stopped (${result.counts.canceled} canceled, ${result.counts.succeeded} succeeded)\n`);
      } finally {
        await session.close();
      }
    });
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

/** Not the runs a job continued as new from: one row per job run. */
const JOBS_QUERY = `WorkflowType = '${JobWorkflow.name}' AND ExecutionStatus != 'ContinuedAsNew'`;

async function listJobs(client: Client, out: Output, limit: number): Promise<void> {
  const total = (await client.workflow.count(JOBS_QUERY)).count;
  const jobs: JobListRow[] = [];
  for await (const w of client.workflow.list({ query: JOBS_QUERY })) {
    if (jobs.length >= limit) break;
    const closed = w.closeTime?.toISOString() ?? null;
    const row: JobListRow = {
      id: w.workflowId,
      end: w.status.name.toLowerCase(),
      succeeded: null,
      items: null,
      started: w.startTime.toISOString(),
      closed,
    };
    // A completed workflow's result says how the job ended: canceled, stopped by a cause, items that failed.
    if (w.status.name === 'COMPLETED') {
      const result = await client.workflow
        .getHandle<typeof JobWorkflow>(w.workflowId, w.runId, { followRuns: false })
        .result()
        .catch(() => undefined);
      if (result) Object.assign(row, { end: jobEnd(result), succeeded: result.counts.succeeded, items: result.total });
    }
    jobs.push(row);
  }
  if (out.json) return out.result({ jobs, shown: jobs.length, total });
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
 * Prints one snapshot; true when the job has ended. A job with no workflow was never run
 * (NeverRunError). A running job whose progress no worker answers gets a grace: within its first
 * 30 s, or while the worker `run --detach` spawned is alive, its worker is starting, not missing.
 */
async function showStatus(
  client: Client,
  job: { workflowId: string; jobFile: string; runDate?: string },
  target: string,
  out: Output,
  watching: boolean,
): Promise<boolean> {
  const { workflowId } = job;
  const handle = client.workflow.getHandle<typeof JobWorkflow>(workflowId);
  const described = await handle.describe().catch((error: unknown) => {
    if (error instanceof WorkflowNotFoundError) throw new NeverRunError(workflowId.replace(/^reelflow-/, ''), target);
    throw error;
  });
  const running = described.status.name === 'RUNNING';
  if (!running) {
    // An ended job's truth is its manifest: the latest row of every item, across all runs.
    const outcome = await readOutcome(await loadPlanOrExplain(job.jobFile, job.runDate));
    const { not_rendered: notRendered, ...ended } = outcome.counts;
    const counts = { pending: notRendered, creating: 0, rendering: 0, downloading: 0, ...ended };
    const state = described.status.name.toLowerCase();
    if (out.json) out.result({ job: outcome.job, state, counts, items: outcome.items, spend: outcome.spend ?? null });
    else for (const line of describeOutcome(outcome, job.jobFile)) out.line(line);
    return true;
  }
  const askedAt = Date.now();
  // Without a worker a query waits for one: a bound, so that status answers.
  const progress = await client.withDeadline(askedAt + QUERY_WAIT_MS, () => handle.query(progressQuery)).catch(() => undefined);
  if (!progress) {
    const starting = askedAt - described.startTime.getTime() < WORKER_GRACE_MS || detachedWorkerAlive(workflowId);
    const job = workflowId.replace(/^reelflow-/, '');
    const message = starting
      ? `${workflowId}: running; its worker is starting, progress follows in a moment`
      : `${workflowId}: running, but no worker answers: start one with \`reelflow run JOB.yaml\` or \`reelflow worker\``;
    if (out.json) out.result({ job, state: 'running', worker: starting ? 'starting' : 'none', counts: null, items: null, message });
    else out.line(message);
    return !watching;
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
    skipped: progress.counts.skipped,
  };
  const spend = await spendSoFar(job.jobFile, job.runDate);
  if (out.json) out.result({ job: progress.job, state: progress.state, counts, items: progress.total, spend: spend ?? null });
  else {
    out.line(summaryLine(progress));
    out.line(
      `  creating ${counts.creating}, rendering ${counts.rendering}, downloading ${counts.downloading}, not started ${counts.pending}`,
    );
    for (const line of spendSummaryLines(spend)) out.line(line);
    for (const f of progress.recentFailures.slice(-5))
      out.line(`  ${f.state} #${f.index} ${plainText(f.key)}: ${plainText(f.error?.message ?? '')}`);
  }
  return false;
}

/** Widest a table column gets, in terminal columns. */
const MAX_COLUMN = 40;
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
  'prompt',
  'enhanced_prompt',
  'cost_usd',
  'cost_source',
] as const;

function cell(row: ManifestRow, column: (typeof COLUMNS)[number]): string {
  if (column === 'error') return row.error ? `${row.error.kind}: ${row.error.message}` : '';
  const value = row[column];
  return value === null || value === undefined ? '' : String(value);
}

export function toCsv(rows: ManifestRow[]): string {
  return [COLUMNS.join(','), ...rows.map((r) => COLUMNS.map((c) => csvCell(cell(r, c))).join(','))].join('\n') + '\n';
}

function toTable(rows: TakeRow[], missing: number, columns: number): string {
  // Long values (LiteLLM's task ids are about 130 characters) are cut to the column: --format json
  // and csv have them whole.
  const lines = rows.map((r) =>
    [
      `#${r.index}`,
      r.key,
      stateWithPick(r),
      r.model,
      r.task_id ?? '-',
      r.base_url ?? '-',
      String(r.polls),
      r.file ?? '-',
      r.bytes !== null ? formatBytes(r.bytes) : '-',
      r.sha256 ? r.sha256.slice(0, 12) : '-',
      rowCostText(r),
      r.error ? `${r.error.kind}: ${r.error.message}` : '',
    ].map((v, i, all) => (i === all.length - 1 ? plainText(v) : fitWidth(plainText(v), MAX_COLUMN))),
  );
  const head = ['#', 'KEY', 'STATE', 'MODEL', 'TASK', 'BASE', 'POLLS', 'FILE', 'SIZE', 'SHA256', 'COST', 'ERROR'];
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => displayWidth(l[i]!))));
  const fmt = (l: string[]) => l.map((v, i) => (i === l.length - 1 ? v : padToWidth(v, widths[i]!))).join('  ');
  const tail = missing ? `\n${missing} item(s) of the plan have no result yet\n` : '\n';
  // An enhanced item's prompt and rewrite follow its row, each on a line cut to the terminal.
  const withPrompts = (r: ManifestRow, i: number) => {
    const row = fmt(lines[i]!);
    if (!r.enhanced_prompt) return [row];
    return [row, `    prompt:  ${plainText(r.prompt)}`, `    rewrite: ${plainText(r.enhanced_prompt)}`].map((l, n) =>
      n === 0 ? l : fitWidth(l, columns),
    );
  };
  return [fmt(head), ...rows.flatMap(withPrompts)].join('\n') + tail;
}
