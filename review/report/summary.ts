// Pure figures for the report header: counts per end state, bytes, wall time, and formatting.
import { END_STATES, type ItemEndState } from '../../domain/end-states';
import type { ManifestRow } from '../../storage/manifest/row';

export interface ReportSummary {
  items: number;
  counts: Record<ItemEndState, number>;
  /** Sum of `bytes` over rows that have it (the stored videos). */
  totalBytes: number;
  /** Earliest `created_at`, latest `finished_at`; undefined when no row has a valid one. */
  startedAt?: Date;
  finishedAt?: Date;
  /** finishedAt - startedAt in ms, when both are known and ordered. */
  wallTimeMs?: number;
}

export function parseTime(value: string | null | undefined): Date | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

export function summarize(rows: readonly ManifestRow[]): ReportSummary {
  const counts = Object.fromEntries(END_STATES.map((s) => [s, 0])) as Record<ItemEndState, number>;
  let totalBytes = 0;
  let startedAt: Date | undefined;
  let finishedAt: Date | undefined;
  for (const row of rows) {
    if (row.state in counts) counts[row.state] += 1;
    if (typeof row.bytes === 'number' && Number.isFinite(row.bytes) && row.bytes > 0) totalBytes += row.bytes;
    const created = parseTime(row.created_at);
    if (created && (!startedAt || created < startedAt)) startedAt = created;
    const finished = parseTime(row.finished_at);
    if (finished && (!finishedAt || finished > finishedAt)) finishedAt = finished;
  }
  const summary: ReportSummary = { items: rows.length, counts, totalBytes };
  if (startedAt) summary.startedAt = startedAt;
  if (finishedAt) summary.finishedAt = finishedAt;
  if (startedAt && finishedAt && finishedAt >= startedAt) {
    summary.wallTimeMs = finishedAt.getTime() - startedAt.getTime();
  }
  return summary;
}

/** Elapsed ms from created to finished of one row, when both are known and ordered. */
export function elapsedMs(row: ManifestRow): number | undefined {
  const created = parseTime(row.created_at);
  const finished = parseTime(row.finished_at);
  if (!created || !finished || finished < created) return undefined;
  return finished.getTime() - created.getTime();
}

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** `850 ms`, `4.2 s`, `3 m 05 s`, `2 h 07 m`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const totalSeconds = Math.round(seconds);
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} m`;
  return `${m} m ${String(s).padStart(2, '0')} s`;
}

/** `2025-03-01 14:02:09 UTC`: one unambiguous form, whatever the reader's locale. */
export function formatTime(date: Date | undefined): string {
  if (!date) return '—';
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
