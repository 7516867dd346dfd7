// Per-worker-process resources the activities share: one gateway client per gateway setting (one
// undici pool, one failover state) and one storage per output. The API key is read here, from the
// worker's own environment: it is never an activity argument, so it never enters workflow history.
// The client registers the key with gateway/redact, which every log line passes through; gateway
// messages go to the activity logger, which the worker routes into its log file.
import { ApplicationFailure, log } from '@temporalio/activity';
import { createGatewayClient, type GatewayClient } from '../gateway';
import type { JobSettings, OutputSettings } from '../jobfile/plan';
import { openStorage, type Storage } from '../storage';
import { FailureType } from './failure-types';
import { metricsHere } from './metrics';

const clients = new Map<string, GatewayClient>();
const storages = new Map<string, Storage>();

export function gatewayFor(settings: JobSettings): GatewayClient {
  const { gateway, retries } = settings;
  const cacheKey = JSON.stringify([gateway, retries.create]);
  let client = clients.get(cacheKey);
  if (!client) {
    const apiKey = process.env[gateway.apiKeyEnv];
    if (!apiKey) {
      throw ApplicationFailure.create({
        type: FailureType.missingKey,
        nonRetryable: true,
        message: `the environment variable ${gateway.apiKeyEnv} (gateway.api_key_env) is not set on the worker: export the gateway key there`,
      });
    }
    client = createGatewayClient({
      baseUrls: gateway.baseUrls,
      apiKey,
      apiKeyEnv: gateway.apiKeyEnv,
      requestTimeoutMs: gateway.requestTimeoutMs,
      allowPrivateTargets: gateway.allowPrivateTargets,
      createRetries: retries.create,
      log: (level, message, fields) => log[level](message, { ...fields, component: 'gateway' }),
      // Failovers and cooldowns, counted under the activity whose call caused them.
      onEvent: (event) => metricsHere().gatewayEvent(event),
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
  await Promise.allSettled(all.map((c) => c.close()));
}
