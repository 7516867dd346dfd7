// Recognising a LiteLLM proxy from the doctor's own probe answers (no extra request), and the one
// setting of it that reelflow cannot make safe on its own side.
import { type Check, warn } from './check';
import type { ProbeHeaders } from './http';

/**
 * LiteLLM 1.106.2 sets `x-litellm-version` (and `x-litellm-call-id`, `x-litellm-key-spend`, …) on
 * every answer its route handlers give, errors included, and names its exceptions `litellm.<Kind>Error`
 * in error messages. Its FastAPI 404 for a missing route carries neither, so only the answers of
 * routes it has are recognised. Returns the version ('' when unknown), or undefined.
 */
export function litellmVersion(answer: { headers: ProbeHeaders; text: string }): string | undefined {
  const version = answer.headers['x-litellm-version'];
  if (version !== undefined) return /^[\w.+-]{1,40}$/.test(version) ? version : '';
  if (Object.keys(answer.headers).some((name) => name.startsWith('x-litellm-'))) return '';
  return /"message"\s*:\s*"litellm\.\w+(Error|Exception)\b/.test(answer.text) ? '' : undefined;
}

export interface LiteLLMBase {
  base: string;
  version: string;
}

/**
 * LiteLLM's router sends a request again after an upstream error (`num_retries`, 2 when unset): for a
 * video create that is up to three paid renders for one create, none of which reelflow sees. The
 * setting is in the proxy's config, which a client key cannot read, so the doctor always says it.
 */
export function litellmWarning(found: readonly LiteLLMBase[]): Check | undefined {
  if (found.length === 0) return undefined;
  const versions = [...new Set(found.map((f) => f.version).filter((v) => v !== ''))];
  const what =
    found.length === 1
      ? `${found[0]!.base} is a LiteLLM proxy${versions[0] ? ` ${versions[0]}` : ''}`
      : `${found.map((f) => f.base).join(', ')} are LiteLLM proxies${versions.length ? ` (${versions.join(', ')})` : ''}`;
  return warn(
    'litellm',
    `${what}: its router sends a create to the provider again after an upstream error (num_retries, 2 when not set), ` +
      'which is up to three paid renders for one create, and reelflow cannot see or prevent it. ' +
      "Set router_settings.num_retries: 0 for the video models in the proxy's config.yaml " +
      '(a client key cannot read that setting, so this warning shows whether it is set or not)',
  );
}
