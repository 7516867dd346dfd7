// The priced prompt rewrites e2e tests share: the enhance block, renders at $0.50 each and the
// rewrites at $3 and $15 per million tokens (docs/costs.md), and what the simulator's rewrite of a
// prompt costs at those prices, from the usage it answers with (sim/messages.ts).
import { messageUsage, replyFor } from '../../sim/messages';

export const ENHANCE_SYSTEM = 'Rewrite the idea as one cinematic shot.';

export const ENHANCE = `enhance:\n  model: claude-sonnet-4-6\n  max_tokens: 300\n  system: ${ENHANCE_SYSTEM}`;

export const PRICED_ENHANCE = [
  ENHANCE,
  'pricing:',
  '  seedance-1-0-pro-250528:',
  '    per_video: 0.5',
  '  claude-sonnet-4-6:',
  '    per_million_input_tokens: 3',
  '    per_million_output_tokens: 15',
].join('\n');

export function rewriteUsd(prompt: string): number {
  const usage = messageUsage(prompt, ENHANCE_SYSTEM, replyFor(prompt));
  return Math.round(usage.input_tokens * 3 + usage.output_tokens * 15) / 1e6;
}
