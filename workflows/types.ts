// The workflows' own shapes: their inputs, results, queries and what continue-as-new carries.
// Activity inputs and outputs live beside the activities. Types only: they travel through workflow
// history, so they hold paths, keys and settings, never file contents or secrets.
import type { PriceTable } from '../jobfile/prices';
import type { FailureKind } from '../domain/failures';
import type { NotifyEventType } from '../jobfile/notify-settings';
import type { JobSettingsWithInputs } from '../activities/inputs';
import type { PageItem, PreparedJob } from '../activities/plan';
import type { InputsRef } from '../storage/inputs/refs';
import type { ItemEndState, StateCounts } from '../domain/end-states';
import type { RedoTake } from '../jobfile/takes';
import type { FilmResult } from './assemble';

export type ItemPhase = 'pending' | 'enhancing' | 'creating' | 'rendering' | 'downloading' | 'recording';

export interface JobInput {
  /** The job file's absolute path on the machine that started the job (messages; the key of its stored copy). */
  jobFile: string;
  /**
   * Where the job's inputs (job file, items_from, local references) were stored when it started,
   * and their index's digest (storage/inputs/refs.ts). Absent: workers read them at their paths.
   */
  inputs?: InputsRef;
  /** YYYY-MM-DD for `{date}`; scheduled runs leave it out and use their start time in the schedule's zone. */
  runDate?: string;
  /**
   * Fingerprint of the starter's gateway key (activities/key-fingerprint.ts; never the key): workers
   * holding another key refuse the job's gateway calls. Absent when the starter had no key set.
   */
  keyFingerprint?: string;
  /** Ended states to render again (`--retry-failed`, `--retry-unknown`). */
  retryStates?: ItemEndState[];
  /** Events per run before continuing as new (default 8,000; Temporal's hard limit is 50,000). */
  historyBudget?: number;
  /** `run --budget USD`: the job's budget, in place of the job file's budget.max_usd (docs/costs.md). */
  budgetUsd?: number;
  /**
   * `run --redo`/`--only` (docs/takes.md): the new takes this run renders, and nothing else; each
   * names the take it replaces. Absent: the job file's takes.
   */
  redo?: RedoTake[];
  /**
   * The prices `run` priced the job with (docs/costs.md): the job file's, `--prices FILE`'s and the
   * gateway's published ones, for the models the job uses only (empty when none has a price). Workers
   * price its items with these (the gateway's and --prices' are not in the job file); absent (a
   * schedule's run): the plan's worker reads the gateway's beneath the job file's (PreparedJob.prices).
   */
  prices?: PriceTable;
  /**
   * Folders outside the job file's own that its user let it read (`run --allow-read`, the user's
   * read settings; jobfile/read-scope.ts). Never from the job file. Absent: its folder only.
   */
  allowRead?: string[];
  /**
   * Where the job's outputs go and which gateway it uses, as `run` recorded them when it started the
   * job: what tells this job from another under the same name (client/job-identity.ts). The workflow
   * does not read it. Absent: a schedule's run, or a job started before it was recorded.
   */
  startedAs?: JobStartedAs;
  /**
   * `run --notify NAME`: notification targets added for this run, by name only (the worker resolves
   * each in its notify.yaml; docs/notifications.md). Never an address or a secret.
   */
  notify?: string[];
  /** Carried across continue-as-new; absent on the first run. */
  carry?: JobCarry;
}

export interface JobStartedAs {
  /** The output location (a directory, or `s3://bucket/prefix`). */
  output: string;
  baseUrls: string[];
}

export interface ItemOutcome {
  key: string;
  index: number;
  model: string;
  state: ItemEndState;
  /** Creation to completion as observed by polling, for the per-model median hint. */
  renderMs?: number;
  error?: { kind: FailureKind; message: string };
  /**
   * The item's create met a job-wide cause, so nothing was created and no manifest row written:
   * the item is not started, and the next run renders it (docs/reruns.md). Its `state` is not counted.
   */
  notStarted?: boolean;
  /** The prompt rewrite this run paid for, USD (its row's rewrite_cost_usd: from usage or estimated); absent: none paid, or unpriced. */
  rewriteCostUsd?: number;
  /**
   * Creates of this run that may have reached the gateway (and may be billed): each one that
   * succeeded or whose outcome is unknown, with `retries.create: always` every such attempt. Not
   * a create that provably sent nothing or that the gateway refused. Absent: outcomes of workflows
   * from before the budget (counted as one when the item holds a task).
   */
  createsMaybeSent?: number;
  /** What this run of the item cost, USD, as its manifest row records it (cost_usd, docs/costs.md). */
  costUsd?: number;
}

/** What the job has spent and reserved against budget.max_usd (docs/costs.md). */
export interface BudgetCarry {
  maxUsd: number;
  /** Spent by earlier runs of the job (the manifest's cost_usd) and by the items of this one that ended. */
  spentUsd: number;
}

/**
 * Why a job stopped starting items before its end, for the CLI's exit code and last lines: a
 * job-wide failure (domain/failures.ts JOB_WIDE_CAUSES) or `repeated_failure`
 * (retries.stop_after_failures identical item failures).
 */
export interface JobStopCause {
  kind: FailureKind;
  /** The failure's own message (one item's), already redacted by the activity. */
  message: string;
  /** What the user should do about it. */
  fix: string;
  /** The run's exit code: 2 model, route or key; 3 every gateway address unreachable; 1 item failures. */
  exitCode: 1 | 2 | 3;
}

export interface JobCarry {
  prepared: PreparedJob;
  cursor: number;
  counts: StateCounts;
  /** Child workflow ids started and not yet reported, with the item's index and model. */
  inFlight: Record<string, { key: string; index: number; model: string; reservedUsd?: number; neededBy?: boolean }>;
  /** Present when the job has a budget: what is spent (the reservations are the in-flight items'). */
  budget?: BudgetCarry;
  renderSamples: Record<string, number[]>;
  recentFailures: ItemOutcome[];
  startedAt: number;
  lastCreateAt: number;
  canceled: boolean;
  /** The stop cause's message (kept for histories and clients from before `stoppedBy`). */
  fatal?: string;
  stoppedBy?: JobStopCause;
  /** Items handed to a child whose create met a job-wide cause: not started, no manifest row. */
  notStarted?: number;
  /** Identical item failures since the last success, by kind and normalized message (stop_after_failures). */
  alikeFailures?: Record<string, number>;
  /** A job with notification targets: which events each takes (asked once), item.failed events sent. */
  notify?: { subscribed: Record<string, NotifyEventType[]>; itemEvents: number };
  /** A job whose items need others (docs/chains.md, workflows/chain.ts); absent: none met yet. */
  chain?: ChainCarry;
  runs: number;
}

/** What the job window carries for items that need others (workflows/chain.ts). */
export interface ChainCarry {
  /** Items passed by the cursor that wait for their needs ("not ready yet"), in plan order; bounded (MAX_WAITING). */
  waiting: PageItem[];
  /** Items whose needs all succeeded, to start before the window reads on. */
  ready: PageItem[];
  /** How the items some later item needs ended in this job, by key; `blockedBy` names the need that blocked one. */
  outcomes: Record<string, { state: ItemEndState; blockedBy?: string }>;
  /** The latest blocked items and why, for status and the run's end (bounded). */
  blocked: BlockedItem[];
}

export interface BlockedItem {
  key: string;
  /** The need that did not succeed (the first of its chain that did not). */
  blockedBy: string;
  why: string;
}

export interface JobProgress {
  job: string;
  state: 'preparing' | 'running' | 'canceling' | 'stopping' | 'completed';
  total: number;
  started: number;
  counts: StateCounts & { pending: number; in_flight: number };
  inFlight: Array<{ workflowId: string; key: string; index: number; model: string }>;
  recentFailures: ItemOutcome[];
  startedAt: number;
  etaMs?: number;
  fatal?: string;
  stoppedBy?: JobStopCause;
  /** Items past the cursor that were not started after all (their create met a job-wide cause). */
  notStarted?: number;
  /** Items that wait for their needs, each with the one it waits on (docs/chains.md); absent: none. */
  waiting?: Array<{ key: string; waitsOn: string }>;
  /** The latest items blocked and why; absent: none. */
  blocked?: BlockedItem[];
  runs: number;
}

export interface JobResult {
  job: string;
  total: number;
  counts: StateCounts;
  startedAt: number;
  finishedAt: number;
  fatal?: string;
  stoppedBy?: JobStopCause;
  /** Items left not started by the stop (never created, no manifest row): the next `run` renders them. */
  notStarted: number;
  canceled: boolean;
  /** With a budget: what the job counted as spent, earlier runs' included (docs/costs.md). */
  spentUsd?: number;
  /** With `assemble:`: what became of each film (workflows/assemble.ts). */
  films?: FilmResult[];
  /** The latest items blocked and why (counts.blocked counts them all); absent: none. */
  blocked?: BlockedItem[];
}

export interface RenderInput {
  jobWorkflowId: string;
  /** The plan's item, with what the manifest knew of it (a task it already holds, its request digest). */
  item: PageItem;
  settings: JobSettingsWithInputs;
  /** Median render time of this model in this job so far, ms. */
  medianRenderMs?: number;
}

export interface RenderStatus {
  key: string;
  phase: ItemPhase;
  taskId?: string;
  baseUrl?: string;
  progress?: number;
  polls: number;
  createdAt?: number;
}
