// `reelflow schedule apply|list|delete|trigger|pause|unpause`: a job's `schedule:` block as a Temporal
// Schedule whose action starts JobWorkflow. Scheduled runs carry no runDate: each dates its outputs
// from its own start time in the schedule's time zone, so every run writes under its own {date}.
import type { Client, ScheduleDescription, ScheduleOverlapPolicy } from '@temporalio/client';
import {
  createOrUpdateSchedule,
  describeSchedule,
  findSchedule as findScheduleById,
  jobScheduleIds,
  scheduleOptions as jobScheduleOptions,
  type Found,
} from '../../client/schedules';
import type { Command } from 'commander';
import type { Plan, ScheduleSettings } from '../../jobfile/plan';
import { UsageError } from '../errors';
import { disallowedKeyUses } from '../../client/keys';
import { scheduleId } from '../../workflows/ids';
import { allowedReads } from '../../client/read-allowance';
import { loadPlanOrExplain } from '../../client/jobs';
import { storeInputsOrExplain } from '../../client/job-ref';
import type { InputsRef } from '../../storage/inputs';
import { recordingFiles } from '../../storage/inputs-publish';
import { createOutput, type Output } from '../output';
import { openSession } from '../../client/session';
import { scheduledJobAction } from '../../client/start-job';

const OVERLAP: Record<ScheduleSettings['overlap'], ScheduleOverlapPolicy> = {
  skip: 'SKIP',
  buffer_one: 'BUFFER_ONE',
  allow_all: 'ALLOW_ALL',
};
const PREFIX = scheduleId('');
const WORKER_HINT = 'runs need a worker: keep `reelflow worker` running';

/** Carried in the action's memo (updatable, unlike the schedule's own), since Temporal compiles the cron away. */
interface ScheduleMemo {
  job: string;
  jobFile: string;
  cron: string;
  timezone: string;
  overlap: string;
  /** Digest of the stored inputs' index, when the runs read stored inputs. */
  inputs?: string;
}

interface JsonOption {
  json?: boolean;
}

export function registerScheduleCommand(program: Command): void {
  const schedule = program.command('schedule').description("create, inspect and steer a job's schedule (its schedule: block) on Temporal");

  schedule
    .command('apply')
    .description("create or update the job's schedule from its schedule: block")
    .argument('<job>', 'job file')
    .option('--json', 'one JSON document on stdout')
    .option(
      '--inputs <location>',
      "store the job's files for workers on other machines (runs use this stored version until the next apply): a shared " +
        'directory or s3://bucket/prefix (default: $REELFLOW_INPUTS; with S3 output, beside the outputs)',
    )
    .action((jobFile: string, o: JsonOption & { inputs?: string }) => apply(jobFile, createOutput(!!o.json), o.inputs));

  schedule
    .command('list')
    .description('the schedules: name, cron, time zone, paused, next run, recent runs')
    .option('--json', 'one JSON document on stdout')
    .action((o: JsonOption) => withClient(async (client) => list(client, createOutput(!!o.json))));

  const steer = (verb: string, description: string, act: (client: Client, found: Found, out: Output) => Promise<void>) =>
    schedule
      .command(verb)
      .description(description)
      .argument('<name>', `job name or schedule id (${PREFIX}NAME)`)
      .action((name: string) => withClient(async (client) => act(client, await findSchedule(client, name), createOutput(false))));

  steer('delete', 'delete the schedule (runs already started go on)', async (_c, { id, handle }, out) => {
    await handle.delete();
    out.line(`deleted schedule ${id}: no more runs start from it; runs already started go on`);
  });
  steer('pause', 'pause the schedule: no runs start until unpaused', async (_c, { id, handle, described }, out) => {
    if (described.state.paused) return out.line(`schedule ${id} is already paused`);
    await handle.pause('paused with `reelflow schedule pause`');
    out.line(`paused schedule ${id}: no runs start until \`reelflow schedule unpause ${nameOf(id)}\``);
  });
  steer('unpause', 'unpause the schedule', async (_c, { id, handle, described }, out) => {
    if (!described.state.paused) return out.line(`schedule ${id} is not paused; next run ${when(described.info.nextActionTimes[0])}`);
    await handle.unpause('unpaused with `reelflow schedule unpause`');
    const after = await handle.describe();
    out.line(`unpaused schedule ${id}: next run ${when(after.info.nextActionTimes[0])}; ${WORKER_HINT}`);
  });
  steer('trigger', "start a run now (under the schedule's overlap policy)", trigger);
}

async function withClient(work: (client: Client) => Promise<void>): Promise<void> {
  const session = await openSession();
  try {
    await work(session.client);
  } finally {
    await session.close();
  }
}

function nameOf(id: string): string {
  return id.startsWith(PREFIX) ? id.slice(PREFIX.length) : id;
}

function when(date: Date | undefined): string {
  return date ? date.toISOString().replace(/\.\d{3}Z$/, 'Z') : 'none';
}

function memoOf(described: ScheduleDescription): Partial<ScheduleMemo> {
  const memo = described.action.memo?.reelflow;
  return memo !== null && typeof memo === 'object' ? (memo as Partial<ScheduleMemo>) : {};
}

function scheduleOptions(plan: Plan, settings: ScheduleSettings, inputs: InputsRef | undefined) {
  // Stored inputs: every run reads the version stored by this apply. The user's read settings, as the
  // plan was loaded with (client/read-allowance.ts): every run reads as this one.
  const action = scheduledJobAction(plan, { inputs, allowRead: allowedReads() });
  const memo: ScheduleMemo = {
    job: plan.job,
    jobFile: plan.jobFile,
    cron: settings.cron,
    timezone: settings.timezone,
    overlap: settings.overlap,
    ...(inputs ? { inputs: inputs.index } : {}),
  };
  return jobScheduleOptions({
    scheduleId: scheduleId(plan.job),
    spec: { cronExpressions: [settings.cron], timezone: settings.timezone },
    action: { ...action, memo: { reelflow: memo } },
    policies: { overlap: OVERLAP[settings.overlap] },
  });
}

function changes(before: Partial<ScheduleMemo>, after: ScheduleSettings, jobFile: string, inputs: InputsRef | undefined): string {
  const diffs: string[] = [];
  if (before.inputs !== inputs?.index)
    diffs.push(inputs ? `stored inputs -> sha256:${inputs.index.slice(0, 12)}` : 'inputs read at their paths');
  if (before.cron !== after.cron) diffs.push(`cron "${before.cron ?? '?'}" -> "${after.cron}"`);
  if (before.timezone !== after.timezone) diffs.push(`time zone ${before.timezone ?? '?'} -> ${after.timezone}`);
  if (before.overlap !== after.overlap) diffs.push(`overlap ${before.overlap ?? '?'} -> ${after.overlap}`);
  if (before.jobFile !== jobFile) diffs.push(`job file -> ${jobFile}`);
  return diffs.length ? diffs.join(', ') : 'no changes';
}

async function apply(jobFile: string, out: Output, inputsLocation: string | undefined): Promise<void> {
  const reads = recordingFiles();
  const plan = await loadPlanOrExplain(jobFile, undefined, reads);
  for (const warning of plan.warnings) out.note(warning);
  const settings = plan.schedule;
  if (!settings) {
    throw new UsageError(
      `${jobFile} has no schedule: block, so there is nothing to apply. Add one, for example:\n` +
        '  schedule:\n    cron: "0 3 * * *"\n    timezone: Europe/Berlin\n    overlap: skip',
    );
  }
  // Its runs are carried by workers, each of which applies its own user's key rule (docs/keys.md).
  for (const refusal of disallowedKeyUses(plan, [])) {
    out.note(`warning: workers refuse these runs unless their key rule allows them; this machine's would not: ${refusal.message}`);
  }
  // Without the key here its runs carry no fingerprint: only workers that opted in carry them (docs/keys.md).
  if (!process.env[plan.gateway.apiKeyEnv]) {
    out.note(
      `note: ${plan.gateway.apiKeyEnv} is not set here, so the schedule's runs carry no key fingerprint: only workers ` +
        'started with --accept-keyless-jobs carry them (docs/keys.md)',
    );
  }
  // Checked against this user's notify.yaml above; its runs send with the worker's (docs/notifications.md).
  if (plan.notify?.length) {
    out.note(
      `notify: ${plan.notify.join(', ')} are looked up in the notify.yaml of the worker that carries each run, not in yours: ` +
        'every worker must define them (and hold their secret variables); a worker that does not gives that name up, ' +
        'and `reelflow status` says so (docs/notifications.md)',
    );
  }
  // Beside the schedule's day folders, not in today's: every later run reads them (docs/deploy.md).
  const stored = await storeInputsOrExplain(plan, reads.texts, inputsLocation, (line) => out.note(line), 'schedule');
  await withClient(async (client) => {
    const options = scheduleOptions(plan, settings, stored?.ref);
    let what = '';
    const { outcome, found } = await createOrUpdateSchedule(client, options, (previous) => {
      what = changes(memoOf(previous), settings, plan.jobFile, stored?.ref);
      // A pause, its note and any action limit are the user's choice: an apply keeps them.
      return {
        spec: options.spec,
        action: options.action,
        policies: { ...previous.policies, overlap: options.policies?.overlap },
        state: { paused: previous.state.paused, note: previous.state.note, remainingActions: previous.state.remainingActions },
      };
    });
    const { id, described } = found;
    const next = when(described.info.nextActionTimes[0]);
    const words = settings.description ?? `cron "${settings.cron}" (${settings.timezone})`;
    if (out.json) {
      out.result({
        scheduleId: id,
        job: plan.job,
        outcome,
        cron: settings.cron,
        timezone: settings.timezone,
        overlap: settings.overlap,
        paused: described.state.paused,
        nextRun: described.info.nextActionTimes[0]?.toISOString() ?? null,
      });
    }
    out.line(
      `${outcome} schedule ${id}${outcome === 'updated' ? ` (${what})` : ''}: ${words}, overlap ${settings.overlap}; ` +
        (described.state.paused ? `paused (resume with \`reelflow schedule unpause ${plan.job}\`)` : `next run ${next}`),
    );
    out.line(WORKER_HINT);
  });
}

/** NAME is a job name, a schedule id, or a job file; unknown -> exit 2. */
async function findSchedule(client: Client, name: string): Promise<Found> {
  const ids = /\.ya?ml$/i.test(name)
    ? [scheduleId((await loadPlanOrExplain(name)).job)]
    : [...new Set([name.startsWith(PREFIX) ? name : undefined, scheduleId(name)].filter((v): v is string => !!v))];
  const found = await findScheduleById(client, ids);
  if (found) return found;
  throw new UsageError(
    `no schedule named ${name}: \`reelflow schedule list\` shows the schedules, ` + '`reelflow schedule apply JOB.yaml` creates one',
  );
}

async function trigger(_client: Client, { id, handle, described }: Found, out: Output): Promise<void> {
  const overlap = described.policies.overlap ?? 'SKIP';
  const taken = described.info.numActionsTaken;
  const running = described.info.runningActions.map((a) => a.workflow.workflowId);
  await handle.trigger(overlap);
  if (running.length > 0 && overlap === 'SKIP') {
    out.line(`schedule ${id}: a run is still going (${running.join(', ')}) and overlap is skip, so this trigger starts nothing`);
    return;
  }
  const deadline = Date.now() + 5_000;
  for (;;) {
    const now = await handle.describe();
    if (now.info.numActionsTaken > taken) {
      const started = now.info.recentActions.at(-1)?.action.workflow.workflowId ?? '';
      out.line(`triggered schedule ${id}: started run ${started}; ${WORKER_HINT}`);
      return;
    }
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  out.line(
    `triggered schedule ${id}: the run starts within moments${overlap === 'BUFFER_ONE' && running.length ? ', once the current one ends' : ''}; ${WORKER_HINT}`,
  );
}

interface Row {
  name: string;
  scheduleId: string;
  cron: string | null;
  timezone: string;
  overlap: string;
  paused: boolean;
  nextRun: string | null;
  recentRuns: Array<{ workflowId: string; scheduledAt: string; startedAt: string }>;
  jobFile: string | null;
}

async function list(client: Client, out: Output): Promise<void> {
  const rows: Row[] = [];
  for (const id of await jobScheduleIds(client, PREFIX)) {
    const d = (await describeSchedule(client, id))?.described;
    if (!d) continue; // listing lags behind a delete
    const memo = memoOf(d);
    rows.push({
      name: memo.job ?? nameOf(id),
      scheduleId: id,
      cron: memo.cron ?? null,
      timezone: d.spec.timezone ?? memo.timezone ?? 'UTC',
      overlap: (d.policies.overlap ?? 'SKIP').toLowerCase(),
      paused: d.state.paused,
      nextRun: d.info.nextActionTimes[0]?.toISOString() ?? null,
      recentRuns: d.info.recentActions.map((a) => ({
        workflowId: a.action.workflow.workflowId,
        scheduledAt: a.scheduledAt.toISOString(),
        startedAt: a.takenAt.toISOString(),
      })),
      jobFile: memo.jobFile ?? null,
    });
  }
  if (out.json) return out.result(rows);
  if (rows.length === 0) return out.line('no schedules yet: create one with `reelflow schedule apply JOB.yaml`');
  const table = rows.map((r) => [
    r.name,
    r.cron ?? '?',
    r.timezone,
    r.paused ? 'yes' : 'no',
    r.paused ? '-' : when(r.nextRun ? new Date(r.nextRun) : undefined),
    r.recentRuns.length ? `${r.recentRuns.length} (last ${when(new Date(r.recentRuns.at(-1)!.startedAt))})` : 'none',
  ]);
  const head = ['NAME', 'CRON', 'TZ', 'PAUSED', 'NEXT RUN', 'RECENT RUNS'];
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((l) => l[i]!.length)));
  for (const line of [head, ...table]) out.line(line.map((v, i) => (i === line.length - 1 ? v : v.padEnd(widths[i]!))).join('  '));
}
