// The user's notification targets (docs/notifications.md): where job events go. Like the key
// settings they belong to the user of the machine (or the worker, for a fleet and schedules), never
// to a job folder: a job file only names targets defined here, so a handed job file cannot send the
// job's prompts and spend to an address of its choosing. `$REELFLOW_NOTIFY_CONFIG`, else
// `notify.yaml` beside the key settings' default place (`$XDG_CONFIG_HOME/reelflow/`, else
// `~/.config/reelflow/`). A missing file defines no target.
//
//   on-call:
//     webhook: https://ops.example.com/reelflow
//     secret_env: REELFLOW_WEBHOOK_SECRET
//     events: [job.ended, item.failed]
//   studio-slack:
//     slack: https://hooks.slack.com/services/T000/B000/XXXX
//   phone:
//     ntfy: https://ntfy.sh/my-studio-renders
import { isMap } from 'yaml';
import { readSettingsText, settingsEntries, userSettingsPath } from './settings-file';
import { parseDuration } from './values';

export class NotifySettingsError extends Error {
  override name = 'NotifySettingsError';
}

export const NOTIFY_EVENTS = ['job.started', 'job.ended', 'item.failed'] as const;
export type NotifyEventType = (typeof NOTIFY_EVENTS)[number];
export const NOTIFY_KINDS = ['webhook', 'slack', 'ntfy'] as const;
export type NotifyKind = (typeof NOTIFY_KINDS)[number];

/** How long a delivery is retried by default, and at most (retry_for). */
export const DEFAULT_RETRY_FOR_MS = 60 * 60_000;
export const MAX_RETRY_FOR_MS = 24 * 60 * 60_000;

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
const VARIABLE_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface NotifyTarget {
  name: string;
  kind: NotifyKind;
  /** The address events are sent to. A secret for Slack (the URL is the credential): never in history or logs. */
  url: string;
  /** webhook: the environment variable holding the `whsec_` secret (its name only; the value is read when sending). */
  secretEnv?: string;
  events: NotifyEventType[];
  retryForMs: number;
  /** `notify.yaml:3:1`: where the target is defined, for messages. */
  where: string;
}

export interface NotifySettings {
  /** The file read (or that would be read: messages tell the user where to write). */
  path: string;
  targets: Map<string, NotifyTarget>;
}

export function notifySettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  return userSettingsPath(env, 'REELFLOW_NOTIFY_CONFIG', 'notify.yaml');
}

/** Reads the settings file; a file that is there and wrong is an error naming file:line:column. */
export function readNotifySettings(env: NodeJS.ProcessEnv = process.env): NotifySettings {
  const path = notifySettingsPath(env);
  const text = readSettingsText(path, 'the notification settings file', (m) => new NotifySettingsError(m));
  return { path, targets: text === undefined ? new Map() : parseNotifySettings(text, path) };
}

const EXAMPLE =
  'e.g.\non-call:\n  webhook: https://ops.example.com/reelflow\n  secret_env: REELFLOW_WEBHOOK_SECRET\n' +
  'studio-slack:\n  slack: https://hooks.slack.com/services/...\nphone:\n  ntfy: https://ntfy.sh/my-topic';

export function parseNotifySettings(text: string, path: string): Map<string, NotifyTarget> {
  const expected = `expected a mapping of target names to one webhook, slack or ntfy address each, ${EXAMPLE}`;
  const fail = (m: string) => new NotifySettingsError(m);
  const targets = new Map<string, NotifyTarget>();
  for (const { name, value, where } of settingsEntries(text, path, expected, fail)) {
    if (!NAME_RE.test(name)) throw fail(`${where}: ${JSON.stringify(name)} is not a target name (letters, digits, - and _, at most 63)`);
    if (!isMap(value)) throw fail(`${where}: ${name}: ${expected}`);
    targets.set(name, parseTarget(name, value.toJSON() as Record<string, unknown>, where));
  }
  return targets;
}

function parseTarget(name: string, fields: Record<string, unknown>, where: string): NotifyTarget {
  const fail = (m: string) => new NotifySettingsError(`${where}: ${name}: ${m}`);
  const allowed = [...NOTIFY_KINDS, 'secret_env', 'events', 'retry_for'];
  for (const key of Object.keys(fields)) {
    if (!allowed.includes(key)) throw fail(`unknown setting ${JSON.stringify(key)}; allowed: ${allowed.join(', ')}`);
  }
  const kinds = NOTIFY_KINDS.filter((k) => fields[k] !== undefined);
  if (kinds.length !== 1) throw fail(`give exactly one of webhook, slack or ntfy (an http(s) address); ${EXAMPLE}`);
  const kind = kinds[0]!;
  const url = fields[kind];
  if (typeof url !== 'string' || !isHttpUrl(url)) throw fail(`${kind} must be an http(s) address`);
  const target: NotifyTarget = { name, kind, url, events: ['job.ended'], retryForMs: DEFAULT_RETRY_FOR_MS, where };
  if (fields.secret_env !== undefined) {
    if (kind !== 'webhook') throw fail('secret_env applies to a webhook only (Slack and ntfy addresses carry their own credential)');
    if (typeof fields.secret_env !== 'string' || !VARIABLE_RE.test(fields.secret_env))
      throw fail('secret_env must name an environment variable holding a whsec_... secret, e.g. REELFLOW_WEBHOOK_SECRET');
    target.secretEnv = fields.secret_env;
  } else if (kind === 'webhook') {
    throw fail('a webhook is signed (Standard Webhooks): add secret_env naming the variable that holds its whsec_... secret');
  }
  if (fields.events !== undefined) {
    const listed: unknown[] = Array.isArray(fields.events) ? fields.events : [fields.events];
    const bad = listed.find((e) => typeof e !== 'string' || !(NOTIFY_EVENTS as readonly string[]).includes(e));
    if (bad !== undefined || listed.length === 0)
      throw fail(
        `events must list some of ${NOTIFY_EVENTS.join(', ')}${bad !== undefined ? `; ${JSON.stringify(bad)} is none of them` : ''}`,
      );
    target.events = [...new Set(listed as NotifyEventType[])];
  }
  if (fields.retry_for !== undefined) {
    const retryFor = typeof fields.retry_for === 'string' ? parseDuration(fields.retry_for) : undefined;
    if (retryFor === undefined || retryFor <= 0 || retryFor > MAX_RETRY_FOR_MS)
      throw fail('retry_for must be a duration from 1s to 24h, such as 1h or 30m (default 1h)');
    target.retryForMs = retryFor;
  }
  return target;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * The problem with naming `names` as targets under `settings`, or undefined: the message a job
 * file's `notify:` (at its line) and `run --notify` give.
 */
export function undefinedTargets(names: readonly string[], settings: NotifySettings): string | undefined {
  const missing = names.filter((n) => !settings.targets.has(n));
  if (missing.length === 0) return undefined;
  const defined = [...settings.targets.keys()];
  return (
    `notify target${missing.length > 1 ? 's' : ''} ${missing.map((n) => JSON.stringify(n)).join(', ')} not defined in ${settings.path}` +
    ` (${defined.length ? `defined: ${defined.join(', ')}` : 'it defines none'}); targets live in the user's settings, never in a job file (docs/notifications.md)`
  );
}
