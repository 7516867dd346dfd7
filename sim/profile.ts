// Which gateway the simulator imitates. 'default' is the gateway of docs/protocol.md (the one the
// simulator was written from); the others reproduce what a real gateway was seen doing, from
// test/gateways/OBSERVED.md: its routes, ids, answer shapes, error bodies and timing.

export const PROFILES = ['default', 'litellm', 'new-api', 'new-api-0.10'] as const;

/**
 * - `litellm`: LiteLLM proxy 1.106: only the OpenAI videos protocol and Messages, long base64 ids,
 *   its error shapes, `Range` ignored on content.
 * - `new-api`: a newer new-api release: the protocol by channel (Veo models, on its Gemini channel, make video
 *   objects on either route), readings refreshed from upstream every 15 s, a video object's `result_url` on its
 *   `ServerAddress`, `Range` ignored on content, its Chinese error messages.
 * - `new-api-0.10`: new-api v0.10.0, the tagged release: as `new-api`, with the upstream's ids, a
 *   create answer of only `task_id`, no `result_url` (the address is in `fail_reason`), and a failed
 *   Seedance task saying only "task failed" (the reason is in `data.data.error`).
 */
export type SimProfile = (typeof PROFILES)[number];

export function isProfile(value: string): value is SimProfile {
  return (PROFILES as readonly string[]).includes(value);
}

export function isNewApi(profile: SimProfile): boolean {
  return profile === 'new-api' || profile === 'new-api-0.10';
}

/** new-api's default ServerAddress: the host it names in addresses unless its operator sets another. */
export const NEW_API_SERVER_ADDRESS = 'http://localhost:3000';
/** new-api reads every unfinished task from its upstream once per round, with a 15 s sleep between rounds. */
export const NEW_API_REFRESH_MS = 15_000;

/** What a profile changes in the simulator's defaults; the options given always win. */
export interface ProfileDefaults {
  models?: string[];
  group?: string;
  refreshMs: number;
  /** new-api: a Seedance task's video lives on its upstream's file host (the CDN listener). */
  cdn?: boolean;
}

export function profileDefaults(profile: SimProfile): ProfileDefaults {
  switch (profile) {
    case 'litellm':
      // The models of the config in OBSERVED.md: `upstream-unknown` is listed by LiteLLM but refused upstream.
      return {
        models: ['veo-3.1-fast-generate-001', 'veo-3.1-generate-001', 'upstream-unknown', 'claude-sonnet-4-6', 'claude-haiku-4-5'],
        refreshMs: 0,
      };
    case 'new-api':
    case 'new-api-0.10':
      return { group: 'default', refreshMs: NEW_API_REFRESH_MS, cdn: true };
    default:
      return { refreshMs: 0 };
  }
}

/**
 * A model of new-api's Gemini channel (type 24): Veo. Its tasks are video objects on /v1/videos and
 * readable on either route (test/gateways/OBSERVED.md); it is priced per call, and its endpoint
 * types are `gemini` and `openai` (common/endpoint_type.go).
 */
export function isVideoObjectModel(model: string): boolean {
  return /^veo/i.test(model);
}

/** LiteLLM lists these but its upstream does not know them (`model_name: upstream-unknown` in OBSERVED.md). */
export function isUpstreamUnknown(model: string): boolean {
  return model.startsWith('upstream-unknown');
}
