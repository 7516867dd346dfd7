// Pure readers of what gateways send: task ids, statuses, progress, result URLs.
import type { TaskState } from './contract';
import { lastFrameAddressCandidates, STATUS_WORDS, videoAddressCandidates } from './dialects';
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
 * Maps every gateway's status words (gateway/dialects) case-insensitively. `UNKNOWN` maps to
 * `unknown` (the gateway's own word, not terminal); anything unrecognised is taken as still running.
 */
export function mapTaskStatus(raw: unknown): MappedStatus {
  const key =
    typeof raw === 'string'
      ? raw
          .trim()
          .toLowerCase()
          .replace(/[\s-]+/g, '_')
      : '';
  const state = STATUS_WORDS[key] ?? 'running';
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
  /** The last frame's address, on success, when the gateway passes the provider's on (docs/chains.md). */
  lastFrameUrl?: string;
  failReason?: string;
}

function errorMessageOf(value: unknown): string | undefined {
  const obj = asObject(value);
  if (obj) return nonEmptyString(obj.message) ?? nonEmptyString(obj.code);
  return nonEmptyString(value);
}

/** `message (code)` of an upstream error object, or whichever of the two it has. */
function upstreamErrorText(value: unknown): string | undefined {
  const obj = asObject(value);
  if (!obj) return undefined;
  const message = nonEmptyString(obj.message);
  const code = nonEmptyString(obj.code);
  if (message && code && !message.includes(code)) return `${message} (${code})`;
  return message ?? code;
}

/** An http(s) address of sane length, as its normalised href; anything else is no address. */
function videoAddress(value: unknown): string | undefined {
  const text = nonEmptyString(value);
  if (text === undefined || text.length > MAX_URL) return undefined;
  return parseHttpUrl(text)?.href;
}

/**
 * Where a finished task's video is: the first of the places the gateways put it (gateway/dialects:
 * `result_url`, then new-api's) that holds an http(s) address of sane length.
 */
function finishedVideoAddress(task: Json, upstream: Json | undefined): string | undefined {
  for (const candidate of videoAddressCandidates({ task, upstream })) {
    const url = videoAddress(candidate);
    if (url) return url;
  }
  return undefined;
}

/**
 * Why a task failed, in the gateway's words: `fail_reason`, then `error`, then `result_url` (the
 * real gateway copies the failure text there). new-api v0.10.0 says only "task failed" and keeps
 * the upstream's reason in `data.error`: that is added, so the user sees what actually happened.
 */
function failureText(task: Json, upstream: Json | undefined, mapped: MappedStatus, rawStatus: string): string {
  const own = nonEmptyString(task.fail_reason) ?? errorMessageOf(task.error) ?? nonEmptyString(task.result_url);
  const nested = upstreamErrorText(upstream?.error);
  if (own && nested) return own.includes(nested) ? own : `${own}: ${nested}`;
  return own ?? nested ?? mapped.impliedReason ?? `the gateway reported status ${rawStatus || 'failed'}`;
}

/**
 * Reads a task out of a retrieve body of either protocol: the general `{code, message, data}`
 * wrapper (whose `data.data` is the upstream's own task, on gateways that pass it through) or the
 * bare video object. An address is taken only on success and only if http(s); on failure those
 * fields are reason candidates.
 */
export function parseTaskBody(body: unknown): ParsedTask {
  const top = asObject(body) ?? {};
  const data = asObject(top.data);
  const task = data && ('status' in data || 'task_id' in data) ? data : top;
  const upstream = task === data ? asObject(data.data) : undefined;
  const rawStatus = typeof task.status === 'string' ? task.status : '';
  const mapped = mapTaskStatus(rawStatus);
  const result: ParsedTask = { state: mapped.state, rawStatus };
  const taskId = extractTaskId(top);
  if (taskId !== undefined) result.taskId = taskId;
  const progress = parseProgress(task.progress);
  if (progress !== undefined) result.progress = progress;
  if (mapped.state === 'succeeded') {
    const url = finishedVideoAddress(task, upstream);
    if (url) result.resultUrl = url;
    // Untrusted like the video's address: an http(s) address of sane length, or nothing.
    const lastFrame = lastFrameAddressCandidates({ task, upstream })
      .map(videoAddress)
      .find((u) => u !== undefined);
    if (lastFrame) result.lastFrameUrl = lastFrame;
  } else if (mapped.state === 'failed') {
    result.failReason = gatewayText(failureText(task, upstream, mapped, rawStatus), MAX_FAIL_REASON);
  }
  return result;
}
