// The user's own prices outrank a job file's (docs/costs.md): a job file may come from someone else,
// and the prices are what a budget holds to. The user keeps them in `--prices FILE` or in a prices
// file beside the key settings file (`~/.config/reelflow/prices.json`, LiteLLM's format). Here: where
// that file is, and how a job file's price compares with the user's for the items that use it.
import { dirname, join } from 'node:path';
import { keySettingsPath } from './key-settings';
import type { PlanItem } from './plan';
import { estimateItemUsd, type ModelPrice } from './prices';

/** The user's prices file: beside the key settings file (jobfile/key-settings.ts), `prices.json`. */
export function userPricesPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(keySettingsPath(env)), 'prices.json');
}

export interface JobPriceCheck {
  /** The job file's price charges less than the user's for some use: the first such, an item's create or a million tokens. */
  below?: { jobUsd: number; userUsd: number; per: string };
  /** The job file's price makes some use of the model free (a create at $0, or both token prices 0). */
  free: boolean;
}

/**
 * The job file's price of `model` against the user's (`user`, when the user has one), over the
 * plan's uses of the model: each item's create (estimateItemUsd), and the token prices when it is
 * the enhance model.
 */
export function checkJobPrice(
  model: string,
  job: ModelPrice,
  user: ModelPrice | undefined,
  items: readonly PlanItem[],
  enhanceModel: string | undefined,
): JobPriceCheck {
  const check: JobPriceCheck = { free: false };
  const compare = (jobUsd: number | undefined, userUsd: number | undefined, per: string) => {
    if (jobUsd !== undefined && userUsd !== undefined && jobUsd < userUsd) check.below ??= { jobUsd, userUsd, per };
  };
  for (const { request } of items) {
    if (request.model !== model) continue;
    const jobEstimate = estimateItemUsd({ [model]: job }, request);
    const userEstimate = user ? estimateItemUsd({ [model]: user }, request) : undefined;
    const jobUsd = 'usd' in jobEstimate ? jobEstimate.usd : undefined;
    if (jobUsd === 0) check.free = true;
    compare(jobUsd, userEstimate && 'usd' in userEstimate ? userEstimate.usd : undefined, 'an item');
  }
  if (model === enhanceModel) {
    if (job.perMillionInputTokens === 0 && job.perMillionOutputTokens === 0) check.free = true;
    compare(job.perMillionInputTokens, user?.perMillionInputTokens, 'a million input tokens');
    compare(job.perMillionOutputTokens, user?.perMillionOutputTokens, 'a million output tokens');
  }
  return check;
}
