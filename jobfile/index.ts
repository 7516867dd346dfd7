// Job file -> validated, expanded plan. The format: docs/jobfiles.md and schema/job.schema.json.
import type { JobFileError } from './plan';

export { loadJobFile, parseJobFile, type LoadResult, type LoadOptions, type UserPrices } from './load';
export { dateIn } from './run-date';
export { userPricesPath } from './user-prices';
export { jobFileSchema, type JobFileInput, type JobFileData } from './schema';
export { describeCron } from './cron';
export type * from './plan';
export type { ItemNeed, NeedUse, FrameRole, AssemblySpec } from './chains';

/** `file:line:column: message`, or `file: message` when the problem has no position (unreadable file). */
export function formatJobFileError(e: JobFileError): string {
  return e.line > 0 ? `${e.file}:${e.line}:${e.column}: ${e.message}` : `${e.file}: ${e.message}`;
}
export {
  readNotifySettings,
  notifySettingsPath,
  parseNotifySettings,
  undefinedTargets,
  NotifySettingsError,
  NOTIFY_EVENTS,
  type NotifySettings,
  type NotifyTarget,
  type NotifyEventType,
} from './notify-settings';
