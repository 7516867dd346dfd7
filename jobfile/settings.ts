// Job-wide settings: gateway, concurrency, polling, retries, output, enhance, schedule.
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { describeCron, splitCronZone } from './cron';
import { type Ctx, warn } from './context';
import type { JobSettings, OutputSettings, SharedLimits } from './plan';
import { renderTemplate } from './placeholders';
import type { JobFileData } from './schema';
import { DEFAULT_MAX_VIDEO_BYTES, normaliseBaseUrl, parseByteSize, parseDuration } from './values';
import { warnAboutKeyExposure } from './exposure';

export const BUILTIN_PLACEHOLDERS = ['job', 'id', 'index', 'model', 'date', 'take'] as const;
const ITEM_ONLY = new Map(
  ['id', 'index', 'model', 'take'].map((n) => [n, `{${n}} differs between items; only {job}, {date} and vars keys are known here`]),
);

/** The job file's concurrency.shared, as the workflows carry it (only the limits given). */
function sharedLimits(shared: NonNullable<JobFileData['concurrency']['shared']>): SharedLimits {
  return {
    ...(shared.max_in_flight !== undefined ? { maxInFlight: shared.max_in_flight } : {}),
    ...(shared.creates_per_minute !== undefined ? { createsPerMinute: shared.creates_per_minute } : {}),
    per: shared.per,
  };
}

function ms(text: string): number {
  return parseDuration(text) ?? 0; // the schema has checked the format
}

/** `{job}`, `{date}` and every vars key, as strings. */
export function jobValues(data: JobFileData, ctx: Ctx): Map<string, string> {
  const values = new Map<string, string>([
    ['job', data.name],
    ['date', ctx.runDate],
  ]);
  for (const [k, v] of Object.entries(data.vars ?? {})) {
    if ((BUILTIN_PLACEHOLDERS as readonly string[]).includes(k)) {
      ctx.errors.push(ctx.pos.error(['vars', k], `vars key '${k}' is reserved: {${k}} is built in; rename it`, 'key'));
    } else values.set(k, String(v));
  }
  return values;
}

function jobTemplate(ctx: Ctx, template: string, values: Map<string, string>, path: readonly PropertyKey[]): string | undefined {
  const r = renderTemplate(template, values, path.join('.'), ITEM_ONLY);
  if (!r.ok) {
    ctx.errors.push(ctx.pos.error(path, r.problem));
    return undefined;
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(r.value)) {
    ctx.errors.push(ctx.pos.error(path, `${path.join('.')} contains a control character`));
    return undefined;
  }
  return r.value;
}

function outsideFolder(folder: string, path: string): boolean {
  const inside = relative(folder, path);
  return inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside);
}

function output(data: JobFileData, ctx: Ctx, values: Map<string, string>, explicit: (k: string) => boolean): OutputSettings {
  const o = data.output;
  const maxBytes = parseByteSize(o.max_bytes) ?? DEFAULT_MAX_VIDEO_BYTES; // the schema has refused invalid ones
  // Only when set: settings recorded in running jobs' histories stay as they were.
  const overwrite = o.overwrite ? { overwrite: true } : {};
  if (o.storage === 'local') {
    if (o.s3) warn(ctx, ['output', 's3'], 'output.s3 is ignored because output.storage is local');
    const dir = jobTemplate(ctx, o.dir, values, ['output', 'dir']) ?? '';
    const absolute = isAbsolute(dir) ? resolve(dir) : resolve(ctx.dir, dir);
    // Allowed (a shared results folder is common) but said: a handed job could aim at ~/.bashrc.d.
    if (outsideFolder(ctx.dir, absolute)) {
      warn(
        ctx,
        ['output', 'dir'],
        `output.dir: ${absolute} is outside the job file's folder ${ctx.dir}: videos, posters and the manifest go there`,
      );
    }
    return { storage: 'local', dir: absolute, maxBytes, ...overwrite };
  }
  if (explicit('dir')) warn(ctx, ['output', 'dir'], 'output.dir is ignored because output.storage is s3');
  if (!o.s3) {
    ctx.errors.push(ctx.pos.error(['output', 'storage'], 'storage s3 needs an output.s3 section with at least bucket'));
    return { storage: 's3', maxBytes, ...overwrite };
  }
  let prefix = jobTemplate(ctx, o.s3.prefix, values, ['output', 's3', 'prefix']) ?? '';
  prefix = prefix.replace(/^\/+/, '');
  if (prefix.split('/').some((p) => p === '..')) {
    ctx.errors.push(ctx.pos.error(['output', 's3', 'prefix'], 'prefix must not contain ".." segments'));
  }
  if (prefix !== '' && !prefix.endsWith('/')) prefix += '/';
  const undatedPrefix = undatedPart(o.s3.prefix, values);
  const check = o.s3.endpoint === undefined ? undefined : normaliseBaseUrl(o.s3.endpoint);
  const endpoint = check?.ok ? check.normalised : undefined; // the schema has refused invalid ones
  return {
    storage: 's3',
    maxBytes,
    ...overwrite,
    s3: {
      bucket: o.s3.bucket,
      prefix,
      ...(undatedPrefix !== undefined ? { undatedPrefix } : {}),
      region: o.s3.region,
      forcePathStyle: o.s3.force_path_style,
      ...(endpoint ? { endpoint } : {}),
    },
  };
}

/**
 * The folders of an S3 prefix template before the one its first `{date}` is in (`nightly/` of
 * `nightly/{date}/`, `` of `{date}/`); undefined without a `{date}`. Found by filling `{date}` with a
 * marker, so escapes and other placeholders are read as when the prefix itself is filled.
 */
function undatedPart(template: string, values: Map<string, string>): string | undefined {
  const marker = '\u0000date\u0000';
  const marked = renderTemplate(template, new Map([...values, ['date', marker]]), 'output.s3.prefix', ITEM_ONLY);
  if (!marked.ok || !marked.value.includes(marker)) return undefined;
  const before = marked.value.slice(0, marked.value.indexOf(marker)).replace(/^\/+/, '');
  return before.slice(0, before.lastIndexOf('/') + 1);
}

export function buildSettings(data: JobFileData, ctx: Ctx, values: Map<string, string>, rawOutput: Record<string, unknown>): JobSettings {
  warnAboutKeyExposure(data, ctx);
  const baseUrls: string[] = [];
  data.gateway.base_urls.forEach((url, i) => {
    const check = normaliseBaseUrl(url);
    const n = check.ok ? check.normalised : url; // the schema has reported the problem
    if (n !== url)
      warn(ctx, ['gateway', 'base_urls', i], `base address "${url}" normalised to "${n}" (reelflow adds the /v1 paths itself)`);
    if (baseUrls.includes(n)) ctx.errors.push(ctx.pos.error(['gateway', 'base_urls', i], `base address "${n}" is listed twice`));
    else baseUrls.push(n);
  });
  const initialMs = ms(data.polling.initial);
  const maxMs = ms(data.polling.max);
  if (maxMs < initialMs) {
    ctx.errors.push(ctx.pos.error(['polling', 'max'], `max (${data.polling.max}) must be at least initial (${data.polling.initial})`));
  }
  const settings: JobSettings = {
    job: data.name,
    gateway: {
      baseUrls,
      apiKeyEnv: data.gateway.api_key_env,
      requestTimeoutMs: ms(data.gateway.request_timeout),
      allowPrivateTargets: data.gateway.allow_private_targets,
    },
    concurrency: {
      maxInFlight: data.concurrency.max_in_flight,
      createsPerMinute: data.concurrency.creates_per_minute,
      ...(data.concurrency.shared ? { shared: sharedLimits(data.concurrency.shared) } : {}),
    },
    polling: { initialMs, maxMs, timeoutMs: ms(data.polling.timeout) },
    retries: { create: data.retries.create, download: data.retries.download, stopAfterFailures: data.retries.stop_after_failures },
    output: output(data, ctx, values, (k) => rawOutput[k] !== undefined),
  };
  if (data.enhance) {
    settings.enhance = { model: data.enhance.model, maxTokens: data.enhance.max_tokens, system: data.enhance.system };
  }
  if (data.budget) settings.budget = { maxUsd: data.budget.max_usd };
  if (data.notify?.length) settings.notify = [...new Set(data.notify)];
  const callbackModels = Object.entries(data.models ?? {})
    .filter(([, entry]) => entry.callbacks === true)
    .map(([model]) => model);
  if (callbackModels.length > 0) settings.callbacks = { models: callbackModels, backstopMs: ms(data.polling.backstop) };
  if (data.schedule) {
    const { cron, timezone: given, overlap } = data.schedule;
    const { zone, expression } = splitCronZone(cron);
    // Temporal takes the zone from CRON_TZ= or from the spec's time zone, not from both.
    if (zone !== undefined && given !== undefined) {
      ctx.errors.push(
        ctx.pos.error(
          ['schedule', 'timezone'],
          `schedule.timezone "${given}" and the cron's ${cron.trim().split(' ')[0]} both set the time zone; ` +
            'Temporal takes it from one place only, so remove one',
        ),
      );
    }
    const timezone = zone ?? given ?? 'UTC';
    // The zone travels apart from the expression, so Temporal never sees two.
    settings.schedule = { cron: expression, timezone, overlap, description: describeCron(expression, timezone) };
  }
  return settings;
}
