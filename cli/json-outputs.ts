// The JSON documents `status --json` and `results --format json` print, for scripts
// (docs/client.md): one schema each, which the commands' outputs satisfy and the tests check.
import { z } from 'zod';
import { END_STATES } from '../domain/end-states';

const END_STATE = z.enum(END_STATES);

/** Items by phase: not started, in flight by phase, and ended by state. */
const statusCounts = z.object({
  pending: z.number().int().nonnegative(),
  creating: z.number().int().nonnegative(),
  rendering: z.number().int().nonnegative(),
  downloading: z.number().int().nonnegative(),
  succeeded: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  timed_out: z.number().int().nonnegative(),
  canceled: z.number().int().nonnegative(),
  unknown: z.number().int().nonnegative(),
  /** Items never started because an item they need did not succeed (docs/chains.md). */
  blocked: z.number().int().nonnegative().optional(),
  skipped: z.number().int().nonnegative().optional(),
});

const usd = z.number().nonnegative();
/** What a job spent (client/spend.ts JobSpend); null when nothing is priced or recorded. */
const spend = z
  .object({
    currency: z.literal('USD'),
    spent_usd: usd,
    billed_usd: usd,
    /** Prompt rewrites priced from their answer's token usage (docs/costs.md). */
    usage_usd: usd,
    estimated_usd: usd,
    estimate_usd: usd.nullable(),
    per_model: z.array(
      z.object({ model: z.string(), spent_usd: usd, billed_usd: usd, usage_usd: usd, estimated_usd: usd, estimate_usd: usd.nullable() }),
    ),
  })
  .nullable();

const stopCause = z.object({ kind: z.string(), message: z.string(), fix: z.string(), exitCode: z.number().int() });

/** `status JOB --json` of a job that has ended: the items' rows and how its workflow stopped. */
export const endedStatusSchema = z.object({
  job: z.string(),
  state: z.string(),
  counts: statusCounts,
  items: z.number().int().nonnegative(),
  canceled: z.boolean(),
  stoppedBy: stopCause.nullable(),
  spend,
  /** The last run's part of the spend, when runs before it paid too (client/spend.ts spendSince); null: it is the job's. */
  last_run_spend: spend.optional(),
  /** Items blocked because a need did not succeed, with it and why (docs/chains.md); absent: none. */
  blocked: z.array(z.object({ key: z.string(), blocked_by: z.string().nullable(), why: z.string() })).optional(),
});

/** `status JOB --json` of a running job whose worker answers. */
export const runningStatusSchema = z.object({
  job: z.string(),
  state: z.enum(['preparing', 'running', 'canceling', 'stopping', 'completed']),
  counts: statusCounts,
  items: z.number().int().nonnegative(),
  spend,
  /** Items that wait for others, each with the one it waits on now (docs/chains.md); absent: none. */
  waiting: z.array(z.object({ key: z.string(), waits_on: z.string() })).optional(),
  /** The latest items blocked, with the need that blocked each and why; absent: none. */
  blocked: z.array(z.object({ key: z.string(), blocked_by: z.string(), why: z.string() })).optional(),
});

/** `status JOB --json` of a running job that no worker answers (yet). */
export const unansweredStatusSchema = z.object({
  job: z.string(),
  state: z.literal('running'),
  worker: z.enum(['starting', 'none']),
  counts: z.null(),
  items: z.null(),
  message: z.string(),
});

/** What status, results and report print with --json for a job never run. */
export const neverRunSchema = z.object({ job: z.string(), state: z.literal('never_run'), message: z.string() });

/** `status JOB --json`: one of these. */
export const jobStatusSchema = z.union([endedStatusSchema, runningStatusSchema, unansweredStatusSchema, neverRunSchema]);

/** `status --json`: the table of recent jobs. */
export const jobListSchema = z.object({
  jobs: z.array(
    z.object({
      id: z.string(),
      end: z.string(),
      succeeded: z.number().int().nonnegative().nullable(),
      items: z.number().int().nonnegative().nullable(),
      started: z.iso.datetime(),
      closed: z.iso.datetime().nullable(),
    }),
  ),
  shown: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
});

/** `results --format json`: one row per item, its latest manifest row with the prompt and its rewrite (docs/files.md). */
export const resultRowSchema = z.looseObject({
  key: z.string(),
  id: z.string().nullable(),
  index: z.number().int().positive(),
  state: END_STATE,
  model: z.string(),
  protocol: z.enum(['general', 'openai']),
  prompt: z.string(),
  enhanced_prompt: z.string().nullable().optional(),
  task_id: z.string().nullable(),
  base_url: z.string().nullable(),
  polls: z.number().int().nonnegative(),
  file: z.string().nullable(),
  bytes: z.number().int().nonnegative().nullable(),
  sha256: z.string().nullable(),
  error: z.object({ kind: z.string(), message: z.string() }).nullable(),
  /** A blocked item's need that did not succeed (docs/chains.md). */
  blocked_by: z.string().optional(),
  cost_usd: z.number().optional(),
  cost_source: z.enum(['billed', 'estimated']).optional(),
  rewrite_cost_usd: z.number().optional(),
  rewrite_cost_source: z.enum(['usage', 'estimated']).optional(),
  /** The rewrite record's call this row's rewrite_cost_usd is (docs/costs.md, "Rewrites no row counts"). */
  rewrite_at: z.string().optional(),
});

export const resultsSchema = z.array(resultRowSchema);

export type EndedStatus = z.infer<typeof endedStatusSchema>;
export type RunningStatus = z.infer<typeof runningStatusSchema>;
export type UnansweredStatus = z.infer<typeof unansweredStatusSchema>;
export type JobList = z.infer<typeof jobListSchema>;
