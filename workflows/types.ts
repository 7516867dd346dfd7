// Shapes that cross the workflow/activity boundary. Types only: they travel through workflow
// history, so they hold paths, keys and settings, never file contents or secrets.
import type { JobSettings, PlanItem, Protocol } from '../jobfile/plan';
import type { ItemEndState } from '../storage/manifest';

export type { ItemEndState };
export type ItemPhase = 'pending' | 'enhancing' | 'creating' | 'rendering' | 'downloading' | 'recording';

export interface JobInput {
  jobFile: string;
  /** YYYY-MM-DD for `{date}`; scheduled runs leave it out and use their start time in the schedule's zone. */
  runDate?: string;
  /** Ended states to render again (`--retry-failed`, `--retry-unknown`). */
  retryStates?: ItemEndState[];
  /** Events per run before continuing as new (default 8,000; Temporal's hard limit is 50,000). */
  historyBudget?: number;
  /** Carried across continue-as-new; absent on the first run. */
  carry?: JobCarry;
}

export interface PreparedJob {
  settings: JobSettings;
  runDate: string;
  /** Digest of the expanded plan: pages are read against it, so an edited job file is noticed. */
  digest: string;
  itemCount: number;
}

export type StateCounts = Record<ItemEndState, number> & { skipped: number };

export interface ItemOutcome {
  key: string;
  index: number;
  model: string;
  state: ItemEndState;
  /** Creation to completion as observed by polling, for the per-model median hint. */
  renderMs?: number;
  error?: { kind: string; message: string };
}

export interface JobCarry {
  prepared: PreparedJob;
  cursor: number;
  counts: StateCounts;
  /** Child workflow ids started and not yet reported, with the item's index and model. */
  inFlight: Record<string, { key: string; index: number; model: string }>;
  renderSamples: Record<string, number[]>;
  recentFailures: ItemOutcome[];
  startedAt: number;
  lastCreateAt: number;
  canceled: boolean;
  fatal?: string;
  runs: number;
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
  runs: number;
}

export interface JobResult {
  job: string;
  total: number;
  counts: StateCounts;
  startedAt: number;
  finishedAt: number;
  fatal?: string;
  canceled: boolean;
}

export interface RenderInput {
  jobWorkflowId: string;
  item: PlanItem;
  settings: JobSettings;
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

export interface CreatedTaskInfo {
  taskId: string;
  baseUrl: string;
  createdAt: number;
}

/**
 * Heartbeat details a create activity has the server record before it sends anything (see
 * activities/create-marker.ts): a create that timed out without them provably sent nothing.
 */
export interface CreateSendingDetails {
  createMaySend: true;
}

/** ApplicationFailure type of a create activity that stopped before sending anything. */
export const CREATE_NOT_SENT = 'create_not_sent';

export interface TaskCheck {
  state: 'pending' | 'running' | 'succeeded' | 'failed' | 'unknown';
  baseUrl: string;
  progress?: number;
  resultUrl?: string;
  failReason?: string;
  pollAfterMs?: number;
}

export interface DownloadInput {
  settings: JobSettings;
  taskId: string;
  protocol: Protocol;
  resultUrl?: string;
  outputName: string;
}

export interface DownloadedVideo {
  file: string;
  location: string;
  bytes: number;
  sha256: string;
  baseUrl: string;
}
