// Pure readers of what gateways send: task ids, statuses, progress, result URLs.
import type { TaskState } from './contract';
import { gatewayText } from './redact';

/** A failure reason is kept to this many characters (it travels in history, the manifest and the report). */
const MAX_FAIL_REASON = 1_000;
/** Longer than any real pre-signed address; a longer one is not taken as an address at all. */
const MAX_URL = 16 * 1024;

function parseHttpUrl(text: unknown): URL | undefined {
  if (typeof text !== 'string' || text.length === 0) return undefined;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

type Json = Record<string, unknown>;

function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

function nonEmptyString(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** Far longer than any real id (LiteLLM's are about 130 characters): a longer one is not taken as an id. */
const MAX_TASK_ID = 1_024;

/** The task id of a create or retrieve body: `id`, then `task_id`, then `data.task_id`, then `data.id`. */
export function extractTaskId(body: unknown): string | undefined {
  const top = asObject(body);
  if (!top) return undefined;
  const data = asObject(top.data);
  const id = nonEmptyString(top.id) ?? nonEmptyString(top.task_id) ?? nonEmptyString(data?.task_id) ?? nonEmptyString(data?.id);
  return id !== undefined && id.length <= MAX_TASK_ID ? id : undefined;
}

const STATE_BY_STATUS: Record<string, TaskState> = {
  not_start: 'pending',
  submitted: 'pending',
  queued: 'pending',
  pending: 'pending',
  in_progress: 'running',
  processing: 'running',
  running: 'running',
  success: 'succeeded',
  succeeded: 'succeeded',
  completed: 'succeeded',
  failure: 'failed',
  failed: 'failed',
  cancelled: 'failed',
  canceled: 'failed',
  expired: 'failed',
  unknown: 'unknown',
};

const IMPLIED_REASON: Record<string, string> = {
  cancelled: 'the task was cancelled upstream',
  canceled: 'the task was cancelled upstream',
  expired: 'the task expired upstream',
};

export interface MappedStatus {
  state: TaskState;
  /** A reason implied by the status itself (cancelled, expired), for when the body gives none. */
  impliedReason?: string;
}

/**
 * Maps either status family case-insensitively. `UNKNOWN` maps to `unknown` (the gateway's own word,
 * not terminal); anything unrecognised is taken as still running.
 */
export function mapTaskStatus(raw: unknown): MappedStatus {
  const key =
    typeof raw === 'string'
      ? raw
          .trim()
          .toLowerCase()
          .replace(/[\s-]+/g, '_')
      : '';
  const state = STATE_BY_STATUS[key] ?? 'running';
  const impliedReason = IMPLIED_REASON[key];
  return impliedReason ? { state, impliedReason } : { state };
}

export function isTerminalState(state: TaskState): boolean {
  return state === 'succeeded' || state === 'failed';
}

/** `"50%"`, `50`, `"50"` -> 50, clamped to 0..100; undefined when absent or unreadable. */
export function parseProgress(raw: unknown): number | undefined {
  let n: number;
  if (typeof raw === 'number') n = raw;
  else if (typeof raw === 'string' && /^\s*\d+(\.\d+)?\s*%?\s*$/.test(raw)) n = Number.parseFloat(raw);
  else return undefined;
  if (!Number.isFinite(n)) return undefined;
  return Math.min(100, Math.max(0, n));
}

export interface ParsedTask {
  taskId?: string;
  state: TaskState;
  rawStatus: string;
  progress?: number;
  resultUrl?: string;
  failReason?: string;
}

function errorMessageOf(value: unknown): string | undefined {
  const obj = asObject(value);
  if (obj) return nonEmptyString(obj.message) ?? nonEmptyString(obj.code);
  return nonEmptyString(value);
}

/**
 * Reads a task out of a retrieve body of either protocol: the general `{code, message, data}`
 * wrapper or the bare video object. `result_url` is an address only on success and only if http(s);
 * on failure it is a reason candidate (the real gateway copies the failure text there).
 */
export function parseTaskBody(body: unknown): ParsedTask {
  const top = asObject(body) ?? {};
  const data = asObject(top.data);
  const task = data && ('status' in data || 'task_id' in data) ? data : top;
  const rawStatus = typeof task.status === 'string' ? task.status : '';
  const mapped = mapTaskStatus(rawStatus);
  const result: ParsedTask = { state: mapped.state, rawStatus };
  const taskId = extractTaskId(top);
  if (taskId !== undefined) result.taskId = taskId;
  const progress = parseProgress(task.progress);
  if (progress !== undefined) result.progress = progress;
  const resultUrlRaw = nonEmptyString(task.result_url);
  if (mapped.state === 'succeeded' && (resultUrlRaw?.length ?? 0) <= MAX_URL) {
    const url = parseHttpUrl(resultUrlRaw);
    if (url) result.resultUrl = url.href;
  } else if (mapped.state === 'failed') {
    const reason =
      nonEmptyString(task.fail_reason) ??
      errorMessageOf(task.error) ??
      nonEmptyString(task.result_url) ??
      mapped.impliedReason ??
      `the gateway reported status ${rawStatus || 'failed'}`;
    result.failReason = gatewayText(reason, MAX_FAIL_REASON);
  }
  return result;
}
