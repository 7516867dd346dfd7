// The names of reelflow's log events: the stable `event` field of each structured line
// (docs/logs.md lists every one with its fields; a unit test keeps the two the same set).
// Dependency-free, so workflows import its values as well as activities and the worker.

export const LogEvent = {
  jobStarted: 'job.started',
  jobContinuedAsNew: 'job.continued_as_new',
  jobEnded: 'job.ended',
  jobManifestNotLeft: 'job.manifest_not_left',
  jobEventNotStarted: 'job.event_not_started',
  jobEventSpendNotRead: 'job.event_spend_not_read',
  jobNotifyTargetsUndefined: 'job.notify_targets_undefined',
  jobPricesNotRecorded: 'job.prices_not_recorded',
  jobManifestRowSkipped: 'job.manifest_row_skipped',
  jobFilmEnded: 'job.film_ended',
  itemRestarted: 'item.restarted',
  itemHeldTask: 'item.held_task',
  itemCreateRetried: 'item.create_retried',
  itemCreated: 'item.created',
  itemStatus: 'item.status',
  itemCheckMoved: 'item.check_moved',
  itemDownloaded: 'item.downloaded',
  itemEnded: 'item.ended',
  itemRewriteNotStored: 'item.rewrite_not_stored',
  gatewayFailover: 'gateway.failover',
  gatewayCooldown: 'gateway.cooldown',
  gatewayOutageStarted: 'gateway.outage_started',
  gatewayOutageContinues: 'gateway.outage_continues',
  gatewayOutageEnded: 'gateway.outage_ended',
  temporalOutageStarted: 'temporal.outage_started',
  temporalOutageContinues: 'temporal.outage_continues',
  temporalOutageEnded: 'temporal.outage_ended',
} as const;

export type LogEventName = (typeof LogEvent)[keyof typeof LogEvent];

/** Text from a gateway (a failure reason, an error message) is cut to this many characters in a line. */
export const LOGGED_TEXT_CHARS = 300;

/** `text` cut to LOGGED_TEXT_CHARS (redaction happens where lines leave the process: worker/log.ts). */
export function bounded(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  return text.length <= LOGGED_TEXT_CHARS ? text : `${text.slice(0, LOGGED_TEXT_CHARS - 1)}…`;
}

/**
 * What a prompt rewrite's workflow id starts with (workflows/ids.ts rewriteWorkflowId), before its
 * job's id: here, so that activities tell its job as they tell an item's (key-fingerprint.ts).
 */
export const REWRITE_WORKFLOW_PREFIX = 'reelflow-rewrite:';

/**
 * The job id and item key of an item workflow's id, `<job id>/<item key>` (workflows/ids.ts): job
 * names have no `/` (jobfile/schema.ts), so the first one separates them. Undefined for a job's own id.
 */
export function itemOfWorkflowId(workflowId: string): { jobId: string; key: string } | undefined {
  const slash = workflowId.indexOf('/');
  if (slash < 0) return undefined;
  return { jobId: workflowId.slice(0, slash), key: workflowId.slice(slash + 1) };
}
