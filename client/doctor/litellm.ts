// Recognising a LiteLLM proxy from the doctor's own probe answers (no extra request), and the one
// setting of it that reelflow cannot make safe on its own side.
import { recogniseGateway, type SeenAnswer } from '../../gateway';
import { type Check, warn } from './check';

/** The LiteLLM version an answer shows ('' when unknown), or undefined when it is not LiteLLM's (gateway/dialects). */
export function litellmVersion(answer: SeenAnswer): string | undefined {
  const found = recogniseGateway(answer);
  return found?.dialect.name === 'litellm' ? found.version : undefined;
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
