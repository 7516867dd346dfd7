// The plan: what a validated, expanded job file becomes. Types only, no runtime code, so that
// workflows/ may import it without pulling anything non-deterministic into the workflow bundle.
import type { AssemblySpec, ItemNeed } from './chains';
import type { PriceTable } from './prices';

export type Protocol = 'general' | 'openai';
export type AssetKind = 'image' | 'video' | 'audio';

/** One reference asset of an item, resolved. */
export interface ReferenceAsset {
  kind: AssetKind;
  /**
   * `reference_image` | `reference_video` | `reference_audio`, matching `kind`; an image may also be
   * `first_frame` or `last_frame` (docs/chains.md).
   */
  role: string;
  /**
   * http(s) URL, `data:` URL, or an absolute local path. Local files are read by the worker
   * at create time (never carried through workflow history).
   */
  source: string;
  local: boolean;
  /**
   * A local file as the plan checked it (activities/plan.ts), which the create sends and nothing
   * else (gateway/reference-file.ts). Absent from the job file's expansion, and from pages of
   * workers from before the check (their creates open `source`).
   */
  checked?: CheckedReference;
}

/** What a local reference was when the job's plan page was read: the create sends exactly this. */
export interface CheckedReference {
  /** The file's path with every link resolved: the create opens it without following any. */
  path: string;
  /** The folder it must stay below: the job file's, a folder the user allows, or the stored inputs' cache. */
  root: string;
  /** sha256 of its content when checked; absent when it could not be read then (the create then refuses a link all the same). */
  sha256?: string;
}

/** Everything the gateway needs to create one video task. No secrets. */
export interface RenderRequest {
  model: string;
  protocol: Protocol;
  prompt: string;
  /** String of digits, e.g. "5". */
  seconds?: string;
  /** general protocol: metadata.resolution, e.g. "720p". */
  resolution?: string;
  /** general protocol: metadata.ratio, e.g. "16:9". */
  ratio?: string;
  /** openai protocol: size, e.g. "1280x720". */
  size?: string;
  generateAudio?: boolean;
  watermark?: boolean;
  /**
   * The seed sent with the create (general: metadata.seed; openai: a seed form
   * field), when the item has takes or a `seed` (docs/takes.md). Absent: none is sent.
   */
  seed?: number;
  references: ReferenceAsset[];
  /**
   * general protocol: metadata.callback_url, added by the create activity of a worker that listens
   * for callbacks (activities/callback-address.ts, docs/callbacks.md); never in a plan.
   */
  callbackUrl?: string;
  /**
   * general protocol: metadata.return_last_frame, set on an item a later item needs the last frame of
   * when its model returns it (`models.<m>.returns_last_frame`, docs/chains.md). Not part of the key.
   */
  returnLastFrame?: boolean;
  /**
   * What the create sends of other items' outputs (their last frame, a frame, the video), resolved
   * into references on the worker just before it sends (activities/needs.ts): added to the request
   * by the plan page, never hashed into the item's key or request digest.
   */
  needs?: ItemNeed[];
}

export interface PlanItem {
  /** Stable identity: the item's `id`, else a short hash of the resolved request. */
  key: string;
  /** The user's `id` if one was given. */
  id?: string;
  /** 1-based position in the expanded plan. */
  index: number;
  request: RenderRequest;
  /** Output object name without extension, relative to the output location (no `..`, no leading `/`). */
  outputName: string;
  /**
   * The item's own placeholder values, from `matrix` and `items_from` columns,
   * as strings. Absent when the item has none.
   */
  vars?: Record<string, string>;
  /**
   * Which take of its item this is, 1-based (`variants`, `run --redo`;
   * docs/takes.md). Absent for an item without variants: its only take.
   */
  take?: number;
  /** The source item's identity when its key does not tell it (no id, a matrix). */
  group?: string;
  /** The key of the take this one was made to replace (`run --redo`, `--only`). */
  redoOf?: string;
  /**
   * What the item waits on: other items of the plan, by key, and how it uses each (docs/chains.md).
   * The plan lists every item after the items it needs. Absent: it waits on nothing.
   */
  needs?: ItemNeed[];
  /** True when a later item needs this one, so the job keeps its outcome (and frame) for it. */
  neededBy?: boolean;
}

export interface GatewaySettings {
  /** Normalised base addresses (no trailing slash, no `/v1`), primary first. */
  baseUrls: string[];
  /** Name of the environment variable that holds the key (never the key). */
  apiKeyEnv: string;
  requestTimeoutMs: number;
  /** gateway.allow_private_targets; absent: decided by where the gateway is (gateway/outbound.ts). */
  allowPrivateTargets?: boolean;
  /**
   * The longest one gateway call of each kind may last, ms, computed by the worker when it plans
   * the job (gateway/budget.ts): every gateway activity's timeout comes from it. Absent in jobs
   * planned before it existed, and in the job file's own settings.
   */
  callBudgetMs?: CallBudgetsMs;
}

/** Worst-case time of one gateway call per kind, ms (gateway/budget.ts, docs/limits.md). */
export interface CallBudgetsMs {
  /** A create, from the largest body the job's requests may send. */
  create: number;
  status: number;
  message: number;
}

export interface EnhanceSettings {
  model: string;
  maxTokens: number;
  system?: string;
}

export interface S3OutputSettings {
  bucket: string;
  /** Resolved prefix, placeholders already filled; ends with `/` or is empty. */
  prefix: string;
  /**
   * When the prefix has a `{date}`: the part before the folder it starts, which every run shares
   * (`nightly/` of `nightly/{date}/`). A schedule keeps its stored inputs there (storage/inputs/refs.ts).
   */
  undatedPrefix?: string;
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
}

export interface OutputSettings {
  storage: 'local' | 's3';
  /** output.max_bytes; absent in settings recorded before it existed (then DEFAULT_MAX_VIDEO_BYTES). */
  maxBytes?: number;
  /** output.overwrite: replace a file under an output name that reelflow did not write (docs/files.md). */
  overwrite?: boolean;
  /** local: absolute directory, placeholders already filled. */
  dir?: string;
  s3?: S3OutputSettings;
}

export interface ScheduleSettings {
  cron: string;
  timezone: string;
  overlap: 'skip' | 'buffer_one' | 'allow_all';
  /** The schedule in words, e.g. "at 03:00 every day (Europe/Berlin)". */
  description?: string;
}

/**
 * concurrency.shared: at most `maxInFlight` renders and `createsPerMinute` creates at once for every
 * job on one gateway key (`per: 'model'`: on one key and model), whichever worker runs them.
 */
export interface SharedLimits {
  maxInFlight?: number;
  createsPerMinute?: number;
  per: 'key' | 'model';
}

/** Settings of a job that every item shares; small enough to travel through workflow history. */
export interface JobSettings {
  job: string;
  gateway: GatewaySettings;
  /** shared: limits shared with every job on the same gateway key (docs/limits.md); absent: none. */
  concurrency: { maxInFlight: number; createsPerMinute?: number; shared?: SharedLimits };
  polling: { initialMs: number; maxMs: number; timeoutMs: number };
  /**
   * stopAfterFailures: retries.stop_after_failures, the identical item failures that stop the job (0:
   * never); absent in settings recorded before it existed (never).
   */
  retries: { create: 'safe' | 'always'; download: number; stopAfterFailures?: number };
  output: OutputSettings;
  enhance?: EnhanceSettings;
  schedule?: ScheduleSettings;
  /** budget.max_usd: the most the job may spend, in USD. */
  budget?: { maxUsd: number };
  /** notify: names of the user's (or worker's) notification targets; never their addresses (docs/notifications.md). */
  notify?: string[];
  /**
   * Callbacks (docs/callbacks.md): the models whose creates carry a callback address
   * (`models.<m>.callbacks: true`), and polling.backstop, the wait between checks of their renders.
   * Absent when no model takes callbacks.
   */
  callbacks?: { models: string[]; backstopMs: number };
  /** assemble: the films cut from the job's items, each its item keys in order (docs/chains.md). Absent: none. */
  assemble?: AssemblySpec[];
}

/**
 * One place where the job file names a model (defaults.model, an item's or items_from row's model,
 * a matrix value, the models.<name> entry, enhance.model): what the run's preflight points at when
 * the gateway's catalog lacks that model (docs/preflight.md). A few per model, never one per item.
 */
export interface ModelSite {
  model: string;
  /** `jobs/a.yaml:7:10`, or `prompts.csv:4:1` for an items_from row. */
  at: string;
  /** `defaults.model`, `items[2].model`, `items_from, column model`, `models.veo-3.1-fast-generate-001`, `enhance.model`. */
  where: string;
}

export interface Plan extends JobSettings {
  /** Absolute path of the job file the plan came from. */
  jobFile: string;
  /** The run date used for `{date}`, YYYY-MM-DD. */
  runDate: string;
  items: PlanItem[];
  warnings: string[];
  /** Prices of the models the plan uses (jobfile/pricing.ts); absent when the job names none. */
  pricing?: PriceTable;
  /** Where the job names each model; kept out of workflow history (activities/plan.ts drops it). */
  modelSites?: ModelSite[];
}

/** A positioned validation problem. */
export interface JobFileError {
  file: string;
  line: number;
  column: number;
  /** The key the problem is about, `items[3].references[0].image`; absent for the file as a whole. */
  path?: string;
  message: string;
}
