// The manifest row of an item that ended blocked (docs/chains.md): it was never created, so it has
// no task, no file and no cost, and it names the need that blocked it. Written by the job's
// workflow (workflows/job.ts) through the same local activity as every other item's row.
import { log, workflowInfo } from '@temporalio/workflow';
import { FailureType } from '../domain/failures';
import { bounded, LogEvent } from '../activities/log-events';
import type { PageItem } from '../activities/plan';
import type { OutputSettings } from '../jobfile/plan';
import type { ManifestRow } from '../storage/manifest/row';
import { recording } from './activities';
import { recordedItem } from './recorded-item';

export function blockedRow(item: PageItem, blockedBy: string, why: string, finishedAt: number): ManifestRow {
  const { request } = item;
  return {
    key: item.key,
    id: item.id ?? null,
    index: item.index,
    state: 'blocked',
    model: request.model,
    protocol: request.protocol,
    prompt: request.prompt,
    ...(item.requestDigest ? { request_digest: item.requestDigest } : {}),
    task_id: null,
    base_url: null,
    created_at: null,
    finished_at: new Date(finishedAt).toISOString(),
    polls: 0,
    file: null,
    bytes: null,
    sha256: null,
    error: { kind: FailureType.blocked, message: why },
    blocked_by: blockedBy,
  };
}

/**
 * Writes the blocked item's row, with its take and what was asked as every row has them. A row that
 * cannot be written after the local activity's retries is logged, not fatal: the job's counts and
 * result still name the item, and the next run blocks it again.
 */
export async function recordBlocked(output: OutputSettings, item: PageItem, blockedBy: string, why: string): Promise<void> {
  try {
    await recording.recordItem({
      output,
      row: blockedRow(item, blockedBy, why, Date.now()),
      item: recordedItem(item),
    });
  } catch (error) {
    log.warn('could not record a blocked item', {
      event: LogEvent.jobManifestNotLeft,
      jobId: workflowInfo().workflowId,
      key: item.key,
      reason: bounded((error as Error | undefined)?.message),
    });
  }
}
