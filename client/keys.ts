// The key rule as the commands apply it (docs/keys.md): `run` refuses a job whose key variable or
// gateway origins the user has not allowed, before any request; `validate` warns; `run` and
// `schedule apply` put the fingerprint of the starter's key in the job's input.
import { keyFingerprint, type FingerprintedJob } from '../activities/key-fingerprint';
import { keyRouteRefusals } from '../gateway';
import { parseAllowKey, type KeyAllowance, type KeyRefusal } from '../jobfile/key-rule';
import { KeySettingsError, readKeySettings, type KeySettings } from '../jobfile/key-settings';
import type { JobSettings, Plan } from '../jobfile/plan';
import { UsageError } from './errors';

/** commander's collector for a repeatable option. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function parseAllowKeys(specs: readonly string[] = []): KeyAllowance[] {
  return specs.map((spec) => {
    const parsed = parseAllowKey(spec);
    if (typeof parsed === 'string') throw new UsageError(parsed);
    return parsed;
  });
}

/** This user's key settings file (docs/keys.md); a wrong one is a usage error naming file:line:column. */
export function keySettingsOrExplain(): KeySettings {
  try {
    return readKeySettings();
  } catch (error) {
    if (error instanceof KeySettingsError) throw new UsageError(error.message);
    throw error;
  }
}

/** Where the job would send a key this user has not allowed it to (settings file plus --allow-key). */
export function disallowedKeyUses(settings: JobSettings, commandLine: readonly KeyAllowance[]): KeyRefusal[] {
  const file = keySettingsOrExplain();
  return keyRouteRefusals(settings.gateway.apiKeyEnv, settings.gateway.baseUrls, [...file.allowances, ...commandLine], file.path);
}

export function refuseDisallowedKeyUses(jobFile: string, settings: JobSettings, commandLine: readonly KeyAllowance[]): void {
  const refusals = disallowedKeyUses(settings, commandLine);
  if (refusals.length === 0) return;
  throw new UsageError(`${jobFile}: nothing was started:\n${refusals.map((r) => `- ${r.message}`).join('\n')}`);
}

/** What a job's fingerprint is bound to (activities/key-fingerprint.ts), as its starter knows it. */
export function fingerprintedJob(plan: Plan, workflowId: string, inputsIndex: string | undefined): FingerprintedJob {
  return {
    workflowId,
    jobFile: plan.jobFile,
    ...(inputsIndex !== undefined ? { inputsIndex } : {}),
    apiKeyEnv: plan.gateway.apiKeyEnv,
    baseUrls: plan.gateway.baseUrls,
  };
}

/** The fingerprint of this environment's key for the job started as `workflowId`, when it holds one. */
export function starterKeyFingerprint(plan: Plan, workflowId: string, inputsIndex: string | undefined): string | undefined {
  const key = process.env[plan.gateway.apiKeyEnv];
  return key ? keyFingerprint(key, fingerprintedJob(plan, workflowId, inputsIndex)) : undefined;
}
