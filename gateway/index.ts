// gateway/: the wire protocol as a library. No Temporal imports.
export type * from './contract';
export { createGatewayClient } from './client';
export {
  GatewayError,
  AuthError,
  ModelUnavailableError,
  RateLimitedError,
  GatewayUnavailableError,
  InvalidRequestError,
  RouteNotFoundError,
  TaskNotFoundError,
  AmbiguousCreateError,
  QuotaExhaustedError,
  QuotaOrPermissionError,
  DownloadError,
  GatewayAbortedError,
  GatewayKeyWithheldError,
  CauseSummary,
  isGatewayError,
  type GatewayErrorKind,
} from './errors';
export { classifyGatewayError, parseErrorBody, isModelNotFound, type ErrorBody, type HttpFailure, type GatewayOperation } from './classify';
export { judgeCatalog, modelUses, readCatalogs, verdictMessage, type CatalogReport } from './catalog';
export { framesDroppedWarning, newApiVersions } from './frames-reach';
export { extractTaskId, mapTaskStatus, parseProgress, parseTaskBody, isTerminalState, type ParsedTask } from './normalize';
export { BaseUrlPool, type BaseUrlPoolOptions, type BaseHealth } from './pool';
export { parseRetryAfter, parsePollAfter, backoffDelay } from './backoff';
export { redact, redactObject, registerSecret } from './redact';
export { createRetryIsSafe } from './retry';
// What `run --dry-run` shows is built by the same code as what is sent.
export { describeGeneralCreateBody, GENERAL_CREATE_PATH } from './general';
export { openaiCreateFields, OPENAI_CREATE_PATH } from './openai';
export { readPublishedPrices, withPublishedPrices, type PublishedPrices } from './published-prices';
export { keyRouteRefusals } from './key-route';
export { readText } from './http';
// Every request to a gateway takes its key header from one decision (gateway/exchange.ts).
export { keyHeaders, sendOnce, type Credential, type KeyRoute } from './exchange';
export { grantedOrigins, probeRoute, probeTransport, type KeyUse } from './probe-transport';
export {
  DIALECTS,
  isTaskNotFound,
  PROBE_HEADERS,
  recogniseGateway,
  type GatewayDialect,
  type DialectName,
  type SeenAnswer,
} from './dialects';
// Which container a stored video is, by its first bytes (report posters hand ffmpeg only these).
export { CONTAINER_HEAD_BYTES, containerOf, type VideoContainer } from './video-container';
