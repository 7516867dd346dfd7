// Per-worker-process resources the activities share: one gateway client per gateway setting (one
// undici pool, one failover state) and one storage per output. The API key is read here, from the
// worker's own environment: it is never an activity argument, so it never enters workflow history.
// The client registers the key with gateway/redact, which every log line passes through; gateway
// messages go to the activity logger, which the worker routes into its log file.
//
// Before a gateway client is used, this worker checks (docs/keys.md) that its own key rule (its
// user's key settings file, its --allow-key) lets the job send that variable to those origins, and
// that its key is the one the job was started with, for that job (activities/job-key-check.ts): a
// job handed to a worker can make it spend neither another secret nor its key for someone else.
import { log, type ApplicationFailure } from '@temporalio/activity';
import { createGatewayClient, keyRouteRefusals, type GatewayClient } from '../gateway';
import type { KeyAllowance } from '../jobfile/key-rule';
import { KeySettingsError, readKeySettings, type KeySettings } from '../jobfile/key-settings';
import type { OutputSettings } from '../jobfile/plan';
import { openStorage, type Storage } from '../storage';
import { FailureType } from '../domain/failures';
import { logGatewayEvent } from './gateway-log';
import { finalFailure } from './failures';
import { activityWorkflowId, keyUseRefusal, type FingerprintedSettings } from './job-key-check';
import { jobIdOfWorkflow } from './key-fingerprint';
import { metricsHere } from './metrics';

const clients = new Map<string, GatewayClient>();
const storages = new Map<string, Storage>();
/**
 * Checks already passed, by settings and fingerprint: the fingerprint is compared once per job per
 * process; the key rule is applied at every call (who listens on a loopback port can change: every
 * connection to it is checked, gateway/key-route.ts).
 */
const keyChecksPassed = new Set<string>();
let commandLineAllowances: readonly KeyAllowance[] = [];
let keySettings: KeySettings | undefined;

/** `--allow-key` of the command that runs this worker (run, worker). */
export function allowKeysInThisWorker(allowances: readonly KeyAllowance[]): void {
  commandLineAllowances = allowances;
  keyChecksPassed.clear();
}

function keyFailure(message: string): ApplicationFailure {
  // A key problem no retry and no other item can fix: the job stops (JOB_FATAL_FAILURES).
  return finalFailure(FailureType.missingKey, message);
}

/** The key rule and the starter's fingerprint, checked before anything is sent; returns the key. */
function checkedKey(settings: FingerprintedSettings, cacheKey: string): string {
  const { apiKeyEnv, baseUrls } = settings.gateway;
  const apiKey = process.env[apiKeyEnv];
  if (!apiKey) {
    throw keyFailure(`the environment variable ${apiKeyEnv} (gateway.api_key_env) is not set on the worker: export the gateway key there`);
  }
  try {
    keySettings ??= readKeySettings();
  } catch (error) {
    if (error instanceof KeySettingsError) throw keyFailure(`this worker's key settings are not valid: ${error.message}`);
    throw error;
  }
  const refusals = keyRouteRefusals(apiKeyEnv, baseUrls, [...keySettings.allowances, ...commandLineAllowances], keySettings.path);
  if (refusals.length > 0) throw keyFailure(`this worker refuses the job: ${refusals.map((r) => r.message).join('\n')}`);
  const workflowId = activityWorkflowId();
  const checkKey = JSON.stringify([
    cacheKey,
    settings.keyFingerprint,
    settings.jobFile,
    settings.inputs?.index,
    workflowId && jobIdOfWorkflow(workflowId),
  ]);
  if (keyChecksPassed.has(checkKey)) return apiKey;
  const refusal = keyUseRefusal(settings, apiKey, workflowId);
  if (refusal) throw keyFailure(refusal);
  keyChecksPassed.add(checkKey);
  return apiKey;
}

/** The worker's key for the job, once its rule and the starter's fingerprint allow it (for requests made without the client). */
export function workerKeyFor(settings: FingerprintedSettings): string {
  return checkedKey(settings, JSON.stringify([settings.gateway, settings.retries.create]));
}

export function gatewayFor(settings: FingerprintedSettings): GatewayClient {
  const { gateway, retries } = settings;
  const cacheKey = JSON.stringify([gateway, retries.create]);
  const apiKey = checkedKey(settings, cacheKey);
  let client = clients.get(cacheKey);
  if (!client) {
    client = createGatewayClient({
      baseUrls: gateway.baseUrls,
      apiKey,
      apiKeyEnv: gateway.apiKeyEnv,
      requestTimeoutMs: gateway.requestTimeoutMs,
      allowPrivateTargets: gateway.allowPrivateTargets,
      createRetries: retries.create,
      log: (level, message, fields) => log[level](message, { ...fields, component: 'gateway' }),
      // Failovers and cooldowns, counted and logged under the activity whose call caused them.
      onEvent: (event) => {
        metricsHere().gatewayEvent(event);
        logGatewayEvent(event);
      },
    });
    clients.set(cacheKey, client);
  }
  return client;
}

export function storageFor(output: OutputSettings): Storage {
  const cacheKey = JSON.stringify(output);
  let storage = storages.get(cacheKey);
  if (!storage) {
    storage = openStorage(output);
    storages.set(cacheKey, storage);
  }
  return storage;
}

/** Closes pooled connections when the worker shuts down. */
export async function closeActivityResources(): Promise<void> {
  const all = [...clients.values()];
  clients.clear();
  storages.clear();
  keyChecksPassed.clear();
  keySettings = undefined;
  await Promise.allSettled(all.map((c) => c.close()));
}
