// The seed's service: the gateway of docs/protocol.md, the one reelflow and its simulator (profile
// `default`) were written from. Its task protocol (`{code, message, data}` with the address in
// `data.result_url`) is also new-api's; its video protocol is OpenAI's video object.
import type { GatewayDialect } from './dialect';

export const seed: GatewayDialect = {
  name: 'seed',
  observed: 'docs/protocol.md',
  // 400 `task_not_exist` right after a create (the task protocol); 404 "Task not found" on /v1/videos/{id}.
  taskNotFound: { codes: ['task_not_exist', 'task_not_found'], words: /task[_ ]not[_ ](exist|found)/i },
  // OpenAI's words, which gateways pass through from the provider.
  modelNotFound: { codes: ['model_not_found'], words: /model .* not found|model .* does not exist/i },
  quotaExhausted: { codes: ['insufficient_quota'], words: /insufficient (user )?(quota|balance)|exceeded your current quota/i },
  // Both families, case-insensitive: the task protocol's upper-case words and the video object's.
  statusWords: {
    not_start: 'pending',
    submitted: 'pending',
    queued: 'pending',
    pending: 'pending',
    in_progress: 'running',
    processing: 'running',
    running: 'running',
    success: 'succeeded',
    succeeded: 'succeeded',
    completed: 'succeeded',
    failure: 'failed',
    failed: 'failed',
    cancelled: 'failed',
    canceled: 'failed',
    expired: 'failed',
    // The gateway's own word for a task it cannot tell about yet: not terminal.
    unknown: 'unknown',
  },
  videoAddress: [({ task }) => task.result_url],
  contentEndpoint: { honoursRange: true, namesOtherHost: false },
};
