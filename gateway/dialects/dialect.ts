// The shape of one record of gateway/dialects/: what one gateway the project knows says or does
// differently from the others. Each record holds its gateway's facts once, with where they were
// seen (docs/protocol.md for the seed's service, test/gateways/OBSERVED.md for the real gateways);
// classification, normalisation, the catalog, the published prices and the doctor ask the records
// (gateway/dialects/index.ts) instead of restating them. A new gateway is one record and its tests.
import type { PriceTable } from '../../jobfile/prices';
import type { TaskState } from '../contract';

export type DialectName = 'seed' | 'litellm' | 'new-api';

/** How a gateway says one thing in an error body: its `code` (or `error.type`) values, and its words. */
export interface Saying {
  codes: readonly string[];
  /** Matched against the body's message. */
  words?: RegExp;
}

type Json = Record<string, unknown>;

/** A task's body as normalisation reads it: the task object, and the upstream's own task inside it. */
export interface TaskView {
  task: Json;
  upstream: Json | undefined;
}

/** Published prices read from one answer: the prices of the asked models, and the ones it lists unpriced. */
export interface PricesReading {
  kind: 'prices';
  gateway: DialectName;
  prices: PriceTable;
  unpriced: Record<string, string>;
}

/** Where a gateway publishes its prices and how its answer is read. */
export interface PublishedPricesSource {
  path: string;
  /** The key is sent with the request (to the base address's origin only); else it goes without. */
  withKey: boolean;
  read(doc: unknown, models: ReadonlySet<string>, base: string): PricesReading | undefined;
}

/** What a task's content endpoint (`GET /v1/videos/{id}/content`, a result_url) allows. */
export interface ContentEndpoint {
  /** It answers `Range` with 206; false: a cut download starts again from byte 0. */
  honoursRange: boolean;
  /** The result_url names a host of the gateway's own setting, not the address clients use. */
  namesOtherHost: boolean;
}

/** The answer of one request as the doctor's probes see it (lower-case header names). */
export interface SeenAnswer {
  headers: Readonly<Record<string, string>>;
  text: string;
}

export interface GatewayDialect {
  name: DialectName;
  /** The release the facts were observed on. */
  observed: string;
  /** The task id is unknown (a status check of a task that is gone, or not there yet). */
  taskNotFound: Saying;
  /** The model is not available to the key. */
  modelNotFound: Saying;
  /** The key's quota or the account's balance is used up. */
  quotaExhausted: Saying;
  /** The message of a 404 for the path itself: the gateway has no such route. */
  missingRoute?: RegExp;
  /** Codes of a 400 that is really the key not being looked up (read as the key refused). */
  keyUnreadable?: readonly string[];
  /** The task status words it uses, lower case, spaces and dashes as `_`. */
  statusWords: Readonly<Record<string, TaskState>>;
  /** Where a finished task's video address is, in the order this gateway fills them. */
  videoAddress: readonly ((view: TaskView) => unknown)[];
  /**
   * Where a finished task's last frame is (the provider's `content.last_frame_url`, asked for with
   * `metadata.return_last_frame`; docs/chains.md), when this gateway passes it on.
   */
  lastFrameAddress?: readonly ((view: TaskView) => unknown)[];
  contentEndpoint: ContentEndpoint;
  /** The upstream's own words and code out of a message the gateway wrapped them in. */
  unwrapMessage?(message: string): { message: string; code?: string } | undefined;
  /** Whether an answer came from this gateway: its version ('' when unknown), or undefined. */
  recognise?(answer: SeenAnswer): string | undefined;
  /** Headers a probe (a status check of a task that cannot exist) carries so this gateway answers it itself. */
  probeHeaders?: Readonly<Record<string, string>>;
  /** The response header saying what a create cost, USD. */
  billedHeader?: string;
  publishedPrices?: PublishedPricesSource;
}
