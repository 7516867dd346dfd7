// The job file schema: one zod definition per section. It checks each value on its own; checks that
// need several values (models vs items, placeholders, files on disk) live in expand.ts.
import { z } from 'zod';
import { cronProblem, isValidTimeZone, knownTimeZones } from './cron';
import { resolutionLabel, resolutionOfSize } from './prices';
import { FRAME_ROLES, parseSeconds } from './chains';
import { nearest, show, looksLikeApiKey } from './text';
import {
  BUCKET_RE,
  classifySource,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DIGITS_RE,
  ENV_NAME_RE,
  ID_RE,
  NAME_RE,
  normaliseBaseUrl,
  parseDuration,
  PLACEHOLDER_NAME_RE,
  RATIO_RE,
  RESOLUTION_RE,
  SIZE_RE,
  parseByteSize,
} from './values';

type Input = { input?: unknown };

/** A message function: the allowed form and what was found; undefined when the key is missing. */
function says(label: string, allowed: string) {
  return (iss: Input): string | undefined => (iss.input === undefined ? undefined : `${label} must be ${allowed}, got ${show(iss.input)}`);
}

function pattern(label: string, re: RegExp, allowed: string) {
  return z.string({ error: says(label, allowed) }).regex(re, { error: says(label, allowed) });
}

function oneOf<const T extends readonly [string, ...string[]]>(label: string, values: T) {
  return z.enum(values, {
    error: (iss: Input) => {
      if (iss.input === undefined) return undefined;
      const hint = typeof iss.input === 'string' ? nearest(iss.input, values) : undefined;
      return `${label} must be one of ${values.join(', ')}, got ${show(iss.input)}${hint ? `; did you mean "${hint}"?` : ''}`;
    },
  });
}

function flag(label: string) {
  return z.boolean({ error: says(label, 'true or false') });
}

function count(label: string, min: number, max: number) {
  const allowed = `a whole number from ${min} to ${max}`;
  return z
    .number({ error: says(label, allowed) })
    .int({ error: says(label, allowed) })
    .min(min, { error: says(label, allowed) })
    .max(max, { error: says(label, allowed) });
}

/** Records report their own type errors; a bad key is reported by the key schema. */
function recordSays(label: string, allowed: string) {
  const base = says(label, allowed);
  return (iss: Input & { code?: string }): string | undefined => (iss.code === 'invalid_key' ? undefined : base(iss));
}

function text(label: string) {
  return z.string({ error: says(label, 'text') }).min(1, { error: () => `${label} must not be empty` });
}

function byteSize(label: string) {
  const allowed = 'a size such as "20GiB", "500MB" or a number of bytes';
  return z
    .union([z.string(), z.number()], { error: says(label, allowed) })
    .refine((v) => parseByteSize(v) !== undefined, { error: says(label, allowed) })
    .meta({ examples: ['20GiB', '2GB', 1073741824] });
}

export function duration(label: string) {
  const allowed = 'a duration such as "500ms", "10s", "5m" or "2h"';
  return z
    .string({ error: says(label, allowed) })
    .refine((v) => parseDuration(v) !== undefined, { error: says(label, allowed) })
    .meta({ pattern: '^([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?$', examples: ['500ms', '10s', '5m', '2h'] });
}

const digitsMessage = says('seconds', 'a string of digits such as "5"');
export const secondsSchema = z
  .union([z.string(), z.number()], { error: digitsMessage })
  .pipe(z.transform((v) => String(v)))
  .pipe(z.string().regex(DIGITS_RE, { error: digitsMessage }))
  .meta({ description: 'Length in seconds: a string of digits (a bare number is converted).', examples: ['5'] });

export const modelName = z
  .string({ error: says('model', 'a model name') })
  .min(1, { error: () => 'model must not be empty' })
  .regex(/^\S+$/, { error: says('model', 'a model name without spaces') });
export const protocolSchema = oneOf('protocol', ['general', 'openai']);
export const resolutionSchema = pattern('resolution', RESOLUTION_RE, 'a resolution such as "720p"');
export const ratioSchema = pattern('ratio', RATIO_RE, 'an aspect ratio such as "16:9" (quote it in YAML)');
export const sizeSchema = pattern('size', SIZE_RE, 'a size such as "1280x720"');
export const assetKind = oneOf('asset kind', ['image', 'video', 'audio']);

/** At most this many takes of one item (`variants`, docs/takes.md). */
export const MAX_VARIANTS = 100;
/** Seeds are sent as 32-bit signed integers, the range every model that takes one accepts. */
export const MAX_SEED = 2_147_483_647;

/** A whole number in YAML, or its digits as text (an items_from CSV column holds text). */
function wholeNumber(label: string, min: number, max: number) {
  const allowed = `a whole number from ${min} to ${max}`;
  return z
    .union([z.number(), z.string()], { error: says(label, allowed) })
    .refine((v) => (typeof v === 'number' ? Number.isInteger(v) : /^-?\d{1,12}$/.test(v)), { error: says(label, allowed) })
    .pipe(z.transform((v) => Number(v)))
    .pipe(
      z
        .number()
        .min(min, { error: says(label, allowed) })
        .max(max, { error: says(label, allowed) }),
    )
    .meta({ type: 'integer', minimum: min, maximum: max });
}

/** Parameters of a render request; allowed in defaults, models.<m> and items. */
export const requestParams = {
  seconds: secondsSchema.optional(),
  resolution: resolutionSchema.optional().meta({ description: 'general protocol only: metadata.resolution' }),
  ratio: ratioSchema.optional().meta({ description: 'general protocol only: metadata.ratio' }),
  size: sizeSchema.optional().meta({ description: 'openai protocol only: size' }),
  generate_audio: flag('generate_audio').optional(),
  watermark: flag('watermark').optional(),
  variants: wholeNumber('variants', 1, MAX_VARIANTS)
    .optional()
    .meta({ description: 'how many takes of each item to render, each with its own seed, key and name ({take}; docs/takes.md)' }),
  seed: wholeNumber('seed', 0, MAX_SEED)
    .optional()
    .meta({ description: "the seed sent with take 1 (take n gets seed + n - 1); default: derived from the item's key and take" }),
};
export type ParamKey = keyof typeof requestParams | 'model' | 'protocol';
export const PARAM_KEYS: readonly ParamKey[] = [
  'model',
  'protocol',
  'seconds',
  'resolution',
  'ratio',
  'size',
  'generate_audio',
  'watermark',
  'variants',
  'seed',
];
export const paramSchemas: Record<ParamKey, z.ZodType> = {
  model: modelName,
  protocol: protocolSchema,
  seconds: secondsSchema,
  resolution: resolutionSchema,
  ratio: ratioSchema,
  size: sizeSchema,
  generate_audio: flag('generate_audio'),
  watermark: flag('watermark'),
  variants: requestParams.variants.unwrap(),
  seed: requestParams.seed.unwrap(),
};

function sourceOf(kind: string) {
  const allowed = 'an http(s) URL, a data: URL or a local path';
  return z
    .string({ error: says(kind, allowed) })
    .min(1, { error: () => `${kind} must not be empty` })
    .refine((v) => classifySource(v) !== undefined, { error: says(kind, allowed) });
}

const ROLES = ['reference_image', 'reference_video', 'reference_audio', 'first_frame', 'last_frame'] as const;
/** The roles each kind may have; a frame is an image (docs/chains.md). */
const ROLES_OF: Record<'image' | 'video' | 'audio', readonly string[]> = {
  image: ['reference_image', 'first_frame', 'last_frame'],
  video: ['reference_video'],
  audio: ['reference_audio'],
};

/** Another item of the job, by its id (docs/chains.md). */
const itemId = (label: string) => pattern(label, ID_RE, 'the id of another item of the job (1 to 64 of A-Z a-z 0-9 . _ -)');

/** A time into a video: "4.5s", "500ms", or a number of seconds. */
export function secondsTime(label: string) {
  const allowed = 'a time such as "4.5s", "500ms" or a number of seconds';
  return z
    .union([z.string(), z.number()], { error: says(label, allowed) })
    .refine((v) => parseSeconds(v) !== undefined, { error: says(label, allowed) })
    .meta({ examples: ['4.5s', '500ms', 2] });
}

/** `image:` names an item's frame: `{last_frame_of: ID}` or `{frame_of: ID, at: 4.5s}`. */
const frameOfItem = z
  .strictObject(
    {
      last_frame_of: itemId('last_frame_of')
        .optional()
        .meta({ description: "that item's last frame (sent as first_frame unless role says otherwise)" }),
      frame_of: itemId('frame_of').optional().meta({ description: "a frame of that item's video, at `at`" }),
      at: secondsTime('at').optional().meta({ description: 'with frame_of: the time of the frame, such as "4.5s"' }),
    },
    { error: says('image', 'a map with last_frame_of, or frame_of and at') },
  )
  .superRefine((v, ctx) => {
    if ((v.last_frame_of === undefined) === (v.frame_of === undefined))
      ctx.addIssue({ code: 'custom', message: 'image takes one of {last_frame_of: ID} or {frame_of: ID, at: 4.5s}' });
    else if (v.frame_of !== undefined && v.at === undefined)
      ctx.addIssue({ code: 'custom', message: 'frame_of needs at: the time of the frame, such as at: 4.5s' });
    else if (v.last_frame_of !== undefined && v.at !== undefined)
      ctx.addIssue({ code: 'custom', path: ['at'], message: 'at goes with frame_of; last_frame_of takes the last frame' });
  });
const videoOfItem = z.strictObject(
  { output_of: itemId('output_of').meta({ description: "that item's whole video (for models that extend or restyle a clip)" }) },
  { error: says('video', 'a map with output_of') },
);
const imageValue = z.union([sourceOf('image'), frameOfItem], {
  error: says('image', 'an http(s) URL, a data: URL, a local path, {last_frame_of: ID} or {frame_of: ID, at: 4.5s}'),
});
const videoValue = z.union([sourceOf('video'), videoOfItem], {
  error: says('video', 'an http(s) URL, a data: URL, a local path or {output_of: ID}'),
});

export const referenceSchema = z
  .strictObject(
    {
      image: imageValue.optional(),
      video: videoValue.optional(),
      audio: sourceOf('audio').optional(),
      role: oneOf('role', ROLES).optional().meta({
        description:
          'reference_<kind> by default (first_frame for a frame of another item); an image may be first_frame, last_frame or reference_image',
      }),
    },
    { error: says('a reference', 'a map with one of image, video, audio') },
  )
  .superRefine((ref, ctx) => {
    const kinds = (['image', 'video', 'audio'] as const).filter((k) => ref[k] !== undefined);
    if (kinds.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message:
          kinds.length === 0
            ? 'a reference needs one of image, video or audio'
            : `a reference takes exactly one of image, video or audio, got ${kinds.join(' and ')}; use one entry per asset`,
      });
      return;
    }
    const kind = kinds[0] as 'image' | 'video' | 'audio';
    const allowed = ROLES_OF[kind];
    if (ref.role !== undefined && !allowed.includes(ref.role)) {
      const article = kind === 'image' || kind === 'audio' ? 'an' : 'a';
      ctx.addIssue({
        code: 'custom',
        path: ['role'],
        message: `role of ${article} ${kind} reference must be ${allowed.length > 1 ? `one of ${allowed.join(', ')}` : (allowed[0] as string)}, got "${ref.role}"`,
      });
    }
  });

export const itemSchema = z.strictObject(
  {
    id: pattern('id', ID_RE, '1 to 64 of A-Z a-z 0-9 . _ -')
      .optional()
      .meta({ description: 'stable identity; default: a hash of the resolved item' }),
    prompt: text('prompt'),
    model: modelName.optional(),
    protocol: protocolSchema.optional(),
    ...requestParams,
    references: z.array(referenceSchema, { error: says('references', 'a list of references') }).optional(),
    after: z
      .array(itemId('after'), { error: says('after', 'a list of item ids, such as [shot-1]') })
      .optional()
      .meta({ description: 'ids of items this one starts after, passing nothing (docs/chains.md)' }),
  },
  { error: says('an item', 'a map with at least a prompt') },
);
export type ItemInput = z.output<typeof itemSchema>;
export const ITEM_KEYS = Object.keys(itemSchema.shape);

const placeholderKey = z.string().regex(PLACEHOLDER_NAME_RE, {
  error: (iss: Input) => `${show(iss.input)} is not a usable placeholder name: use letters, digits, _ and -, starting with a letter`,
});
const scalar = z.union([z.string(), z.number(), z.boolean()], { error: says('a value', 'text, a number or true/false') });

export const gatewaySchema = z.strictObject(
  {
    base_urls: z
      .array(
        z.string({ error: says('a base address', 'an http(s) URL') }).superRefine((v, ctx) => {
          const check = normaliseBaseUrl(v);
          if (!check.ok) {
            const advice = check.problem?.includes('credentials') ? '' : '; use an http(s) URL such as "https://gw.example.com"';
            ctx.addIssue({
              code: 'custom',
              message: `base address ${check.problem?.includes('credentials') ? 'with user:password' : show(v)} ${check.problem ?? 'is invalid'}${advice}`,
            });
          }
        }),
        { error: says('base_urls', 'a list of http(s) URLs') },
      )
      .min(1, { error: () => 'base_urls needs at least one address' })
      .meta({ description: 'primary first, then alternates of the same service' }),
    api_key_env: z
      .string({ error: says('api_key_env', 'the name of an environment variable') })
      .superRefine((v, ctx) => {
        if (looksLikeApiKey(v)) {
          ctx.addIssue({
            code: 'custom',
            message:
              'api_key_env looks like an API key: never put the key in a job file; put it in the environment (export GATEWAY_API_KEY=...) and write the variable name here',
          });
        } else if (!ENV_NAME_RE.test(v)) {
          ctx.addIssue({
            code: 'custom',
            message: `api_key_env must be the name of an environment variable such as "GATEWAY_API_KEY", got ${show(v)}`,
          });
        }
      })
      .default('GATEWAY_API_KEY'),
    request_timeout: duration('request_timeout').default(`${DEFAULT_REQUEST_TIMEOUT_MS / 1000}s`),
    allow_private_targets: z
      .boolean({ error: says('allow_private_targets', 'true or false') })
      .optional()
      .meta({
        description:
          'let result_urls, redirects and remote references point at private, loopback or link-local addresses (default: only when the gateway itself is on such an address)',
      }),
  },
  { error: says('gateway', 'a map') },
);

export const defaultsSchema = z.strictObject(
  {
    model: modelName.optional(),
    protocol: protocolSchema.optional(),
    ...requestParams,
    references: z
      .array(referenceSchema, { error: says('references', 'a list of references') })
      .optional()
      .meta({ description: 'shared references: every item gets them after its own (docs/jobfiles.md)' }),
  },
  { error: says('defaults', 'a map') },
);

export const modelSchema = z
  .strictObject(
    {
      protocol: protocolSchema.optional(),
      assets: z
        .array(assetKind, { error: says('assets', 'a list of image, video, audio') })
        .optional()
        .meta({ description: 'reference kinds this model accepts' }),
      frames: z
        .array(oneOf('frame role', FRAME_ROLES), { error: says('frames', 'a list of first_frame, last_frame') })
        .optional()
        .meta({ description: 'frame roles this model takes (docs/chains.md); default by family' }),
      mix_frames_and_references: flag('mix_frames_and_references')
        .optional()
        .meta({ description: 'whether frames and reference_* media may share one request (Seedance: false)' }),
      returns_last_frame: flag('returns_last_frame')
        .optional()
        .meta({ description: 'general protocol: send metadata.return_last_frame and read content.last_frame_url back' }),
      callbacks: flag('callbacks').optional().meta({
        description:
          'general protocol only: each create carries metadata.callback_url when the worker listens for callbacks (--callbacks; docs/callbacks.md)',
      }),
      ...requestParams,
    },
    { error: says('a model entry', 'a map') },
  )
  .superRefine((entry, ctx) => {
    if (entry.returns_last_frame && entry.protocol === 'openai')
      ctx.addIssue({
        code: 'custom',
        path: ['returns_last_frame'],
        message: 'returns_last_frame: true needs the general protocol (metadata.return_last_frame); the openai protocol cannot ask for it',
      });
    if (entry.callbacks && entry.protocol === 'openai')
      ctx.addIssue({
        code: 'custom',
        path: ['callbacks'],
        message: 'callbacks: true needs the general protocol (metadata.callback_url); the openai protocol carries no callback address',
      });
  });

export const modelsSchema = z.record(z.string().regex(/^\S+$/, { error: () => 'a model name has no spaces' }), modelSchema, {
  error: recordSays('models', 'a map from model name to its settings'),
});

export const varsSchema = z.record(placeholderKey, scalar, { error: recordSays('vars', 'a map of names to values') });

export const enhanceSchema = z.strictObject(
  {
    model: modelName,
    max_tokens: count('max_tokens', 1, 100_000).default(400),
    system: z.string({ error: says('system', 'text') }).optional(),
  },
  { error: says('enhance', 'a map') },
);

export const itemsFromSchema = z.strictObject(
  {
    file: text('file').meta({ description: '.csv (header row names item keys), .jsonl (one object a line), .txt (one prompt a line)' }),
    format: oneOf('format', ['csv', 'jsonl', 'txt']).optional().meta({ description: 'default: from the file extension' }),
  },
  { error: says('items_from', 'a map with file') },
);

export const matrixSchema = z.record(
  placeholderKey,
  z.array(scalar, { error: says('a matrix entry', 'a list of values') }).min(1, { error: () => 'a matrix entry needs at least one value' }),
  { error: recordSays('matrix', 'a map of names to lists of values') },
);

/** concurrency.shared: limits every job on one gateway key shares, across the fleet (docs/limits.md). */
export const sharedLimitsSchema = z
  .strictObject(
    {
      max_in_flight: count('max_in_flight', 1, 2000).optional(),
      creates_per_minute: count('creates_per_minute', 1, 100_000).optional(),
      per: oneOf('per', ['key', 'model']).default('key').meta({ description: 'one limit per gateway key, or per key and model' }),
    },
    { error: says('concurrency.shared', 'a map with max_in_flight and/or creates_per_minute, and per') },
  )
  .refine((v) => v.max_in_flight !== undefined || v.creates_per_minute !== undefined, {
    error: 'concurrency.shared needs max_in_flight or creates_per_minute (or both)',
  });

export const concurrencySchema = z.strictObject(
  {
    max_in_flight: count('max_in_flight', 1, 2000).default(20),
    creates_per_minute: count('creates_per_minute', 1, 100_000).optional(),
    shared: sharedLimitsSchema.optional(),
  },
  { error: says('concurrency', 'a map') },
);

export const pollingSchema = z.strictObject(
  {
    initial: duration('initial').default('10s'),
    max: duration('max').default('60s'),
    timeout: duration('timeout').default('2h'),
    backstop: duration('backstop')
      .default('2m')
      .meta({ description: 'the wait between checks of a render whose create carried a callback address (docs/callbacks.md)' }),
  },
  { error: says('polling', 'a map') },
);

export const retriesSchema = z.strictObject(
  {
    create: oneOf('create', ['safe', 'always']).default('safe'),
    download: count('download', 1, 100).default(5),
    stop_after_failures: count('stop_after_failures', 0, 1_000_000)
      .default(5)
      .meta({
        description:
          'stop the job after this many items failed the same way (same kind, same message but for numbers and ids) ' +
          'since the last success, e.g. a content policy refusing every prompt; the items in flight finish. 0: never',
      }),
  },
  { error: says('retries', 'a map') },
);

export const s3Schema = z.strictObject(
  {
    bucket: pattern('bucket', BUCKET_RE, 'an S3 bucket name (3-63 of a-z 0-9 . -)'),
    prefix: z.string({ error: says('prefix', 'text') }).default(''),
    region: pattern('region', /^[a-z0-9-]{2,32}$/, 'a region such as "us-east-1"').default('us-east-1'),
    endpoint: z
      .string({ error: says('endpoint', 'an http(s) URL') })
      .refine((v) => normaliseBaseUrl(v).ok, { error: says('endpoint', 'an http(s) URL such as "http://127.0.0.1:9000"') })
      .optional(),
    force_path_style: flag('force_path_style').default(false),
  },
  { error: says('s3', 'a map') },
);

export const outputSchema = z.strictObject(
  {
    storage: oneOf('storage', ['local', 's3']).default('local'),
    dir: text('dir').default('./out/{job}'),
    name: text('name').default('{index:03}-{id}'),
    max_bytes: byteSize('max_bytes')
      .default('20GiB')
      .meta({ description: 'the largest video accepted: a longer declared length is refused, a longer body cut, the item failed' }),
    overwrite: flag('overwrite')
      .default(false)
      .meta({ description: 'replace a file already under an output name that reelflow did not write (default: the item fails naming it)' }),
    s3: s3Schema.optional(),
  },
  { error: says('output', 'a map') },
);

export const scheduleSchema = z.strictObject(
  {
    cron: z
      .string({ error: says('cron', 'a cron expression such as "0 3 * * *"') })
      .superRefine((v, ctx) => {
        const problem = cronProblem(v);
        if (problem) ctx.addIssue({ code: 'custom', message: `cron ${problem}` });
      })
      .meta({
        description:
          "Temporal's cron: 5 fields (minute hour day-of-month month day-of-week), 6 (year last) or 7 " +
          '(second first, year last); day-of-month and day-of-week must both match. Also @daily-style shorthands, ' +
          '"@every 6h[/offset]", a CRON_TZ=<zone> prefix instead of timezone, and a "# comment" at the end.',
        examples: ['0 3 * * *', '30 6 * * MON-FRI', '@every 6h', 'CRON_TZ=Europe/Berlin 0 3 * * *'],
      }),
    timezone: z
      .string({ error: says('timezone', 'an IANA time zone such as "Europe/Berlin"') })
      .superRefine((v, ctx) => {
        if (!isValidTimeZone(v)) {
          const hint = nearest(v, knownTimeZones());
          ctx.addIssue({
            code: 'custom',
            message: `timezone must be an IANA time zone such as "Europe/Berlin", got ${show(v)}${hint ? `; did you mean "${hint}"?` : ''}`,
          });
        }
      })
      .optional()
      .meta({ description: 'IANA time zone of the cron; default UTC, or the zone of a CRON_TZ= prefix' }),
    overlap: oneOf('overlap', ['skip', 'buffer_one', 'allow_all']).default('skip'),
  },
  { error: says('schedule', 'a map') },
);

// Prices and budget (docs/costs.md). Checked here one value at a time; the pricing
// files are read, and the prices merged, by pricing.ts.
const usdAllowed = 'a price in USD: a number 0 or more, such as 0.10';
const usd = (label: string) =>
  z
    .number({ error: says(label, usdAllowed) })
    .min(0, { error: says(label, usdAllowed) })
    .refine((v) => Number.isFinite(v), { error: says(label, usdAllowed) });
// Keys are checked after the map is read: a key refused by the record's key schema would hide the
// reason behind the union's "unexpected form".
const perResolution = z
  .record(z.string().meta({ pattern: '^([1-9][0-9]{1,4}[pP]|[24][kK])$' }), usd('a per-resolution price'), {
    error: recordSays('per_second', 'a map'),
  })
  .superRefine((map, ctx) => {
    const seen = new Map<string, string>();
    for (const key of Object.keys(map)) {
      const label = resolutionLabel(key);
      if (label === undefined) {
        const size = resolutionOfSize(key);
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message:
            `${show(key)} is not a resolution: per_second is by resolution such as 480p, 720p, 1080p, 2k or 4k` +
            (size ? ` (a size is priced by its shorter side: ${key} is ${size})` : ''),
        });
      } else if (seen.has(label)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `${key} and ${seen.get(label)} are the same resolution (${label}): keep one`,
        });
      } else seen.set(label, key);
    }
  });
export const modelPriceSchema = z
  .strictObject(
    {
      per_second: z
        .union([usd('per_second'), perResolution], {
          error: says('per_second', `${usdAllowed}, or a map by resolution such as {720p: 0.10, 1080p: 0.30}`),
        })
        .optional()
        .meta({ description: 'USD per second of video: one number, or a map by resolution ({720p: 0.10, 1080p: 0.30})' }),
      per_video: usd('per_video').optional().meta({ description: 'USD per video, whatever its length' }),
      default_seconds: count('default_seconds', 1, 3600)
        .optional()
        .meta({ description: "the model's length when an item sets no seconds (default: 4 openai, 5 general)" }),
      per_million_input_tokens: usd('per_million_input_tokens').optional().meta({ description: 'Messages (enhance) input price' }),
      per_million_output_tokens: usd('per_million_output_tokens').optional().meta({ description: 'Messages (enhance) output price' }),
    },
    { error: says('a price', 'a map with per_second, per_video or per_million_input_tokens and per_million_output_tokens') },
  )
  .superRefine((p, ctx) => {
    const tokens = p.per_million_input_tokens !== undefined || p.per_million_output_tokens !== undefined;
    if (p.per_second !== undefined && p.per_video !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['per_video'], message: 'a model is priced per_second or per_video, not both: remove one' });
    } else if (tokens && (p.per_second !== undefined || p.per_video !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: 'a model is priced per video or second (a video model) or per token (the enhance model), not both',
      });
    } else if (tokens && (p.per_million_input_tokens === undefined || p.per_million_output_tokens === undefined)) {
      const missing = p.per_million_input_tokens === undefined ? 'per_million_input_tokens' : 'per_million_output_tokens';
      ctx.addIssue({
        code: 'custom',
        message: `a per-token price needs both per_million_input_tokens and per_million_output_tokens: add ${missing}`,
      });
    } else if (!tokens && p.per_second === undefined && p.per_video === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'a price needs per_second, per_video, or per_million_input_tokens and per_million_output_tokens',
      });
    }
  });
export const pricingSchema = z
  .record(z.string().regex(/^\S+$/, { error: () => 'a model name has no spaces' }), modelPriceSchema, {
    error: recordSays('pricing', 'a map from model name to its price'),
  })
  .meta({
    description: "prices per model, in USD; they win over pricing_file; the user's --prices and prices file win over them (docs/costs.md)",
  });
export const budgetSchema = z
  .strictObject(
    {
      max_usd: z
        .number({ error: says('max_usd', 'a number of US dollars above 0, such as 50') })
        .positive({ error: says('max_usd', 'a number of US dollars above 0, such as 50') })
        .refine((v) => Number.isFinite(v), { error: says('max_usd', 'a number of US dollars above 0, such as 50') }),
    },
    { error: says('budget', 'a map with max_usd') },
  )
  .meta({ description: 'the most the job may spend, in USD (docs/costs.md)' });

// notify: names of targets in the user's (or the worker's) notify.yaml, never addresses
// (jobfile/notify-settings.ts, docs/notifications.md): checked against those settings by load.ts.
export const notifySchema = z
  .array(pattern('notify', /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/, 'a target name defined in your notify.yaml'), {
    error: says('notify', 'a list of target names defined in your notify.yaml, such as [studio-slack]'),
  })
  .max(10, { error: says('notify', 'at most 10 target names') })
  .meta({ description: "where job events go: names of targets defined in the user's notify.yaml (docs/notifications.md)" });

/** assemble: films cut from items, in order (docs/chains.md); names are checked unique, ids known, by jobfile/assemble.ts. */
export const assembleSchema = z
  .array(
    z.strictObject(
      {
        name: pattern('name', NAME_RE, 'a name of a-z, 0-9 and -, starting with a letter or digit, at most 63 long'),
        items: z
          .array(itemId('items'), { error: says('items', 'a list of item ids, in the order they are cut') })
          .min(1, { error: () => 'items needs at least one item id' }),
        crossfade: secondsTime('crossfade')
          .optional()
          .meta({ description: 'a crossfade of video and audio between clips, such as "0.5s"' }),
      },
      { error: says('an assembly', 'a map with name and items') },
    ),
    { error: says('assemble', 'a list of {name, items, crossfade}') },
  )
  .meta({ description: 'films cut from the items, each into one file (docs/chains.md)' });

export const jobFileSchema = z
  .strictObject(
    {
      version: z.literal(1, { error: says('version', '1') }).optional(),
      name: pattern('name', NAME_RE, 'a name of a-z, 0-9 and -, starting with a letter or digit, at most 63 long'),
      gateway: gatewaySchema,
      defaults: defaultsSchema.optional(),
      models: modelsSchema.optional(),
      vars: varsSchema.optional(),
      enhance: enhanceSchema.optional(),
      pricing: pricingSchema.optional(),
      pricing_file: text('pricing_file')
        .optional()
        .meta({ description: "a prices file in LiteLLM's model cost map format (JSON), relative to the job file" }),
      budget: budgetSchema.optional(),
      items: z.array(itemSchema, { error: says('items', 'a list of items') }).optional(),
      items_from: itemsFromSchema.optional(),
      matrix: matrixSchema.optional(),
      concurrency: concurrencySchema.prefault({}),
      polling: pollingSchema.prefault({}),
      retries: retriesSchema.prefault({}),
      output: outputSchema.prefault({}),
      schedule: scheduleSchema.optional(),
      notify: notifySchema.optional(),
      assemble: assembleSchema.optional(),
    },
    { error: says('a job file', 'a map of sections') },
  )
  .meta({
    title: 'reelflow job file',
    description: 'A batch of AI video renders: see docs/jobfiles.md.',
  });
export type JobFileInput = z.input<typeof jobFileSchema>;
export type JobFileData = z.output<typeof jobFileSchema>;
