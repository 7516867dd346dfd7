// Shared set-up for the gateway integration tests: the real simulator over real HTTP on loopback.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { createGatewayClient } from '../../../gateway/index';
import type { GatewayClient, GatewayClientOptions, TaskRef, TaskStatus } from '../../../gateway/contract';
import type { RenderRequest } from '../../../jobfile/plan';
import { startSimulator, type SimHandleExt, type SimOptionsExt } from '../../../sim/index';

export const KEY = 'sk-sim-integration-0123456789';
export const MODEL = 'seedance-1-0-pro-250528';

export interface Harness {
  sim: SimHandleExt;
  client: GatewayClient;
  logs: string[];
  close(): Promise<void>;
}

export async function harness(sim: SimOptionsExt = {}, client: Partial<GatewayClientOptions> = {}): Promise<Harness> {
  const handle = await startSimulator({ keys: [KEY], renderMs: 150, videoBytes: 256 * 1024, seed: 7, ...sim });
  const logs: string[] = [];
  const gw = createGatewayClient({
    baseUrls: handle.urls,
    apiKey: KEY,
    apiKeyEnv: 'REELFLOW_TEST_KEY',
    cooldownMs: 2_000,
    maxRetryAfterMs: 3_000,
    log: (level, message, fields) => logs.push(`${level} ${message} ${fields ? JSON.stringify(fields) : ''}`),
    ...client,
  });
  return {
    sim: handle,
    client: gw,
    logs,
    close: async () => {
      await gw.close();
      await handle.close();
    },
  };
}

export function render(prompt: string, over: Partial<RenderRequest> = {}): RenderRequest {
  return { model: MODEL, protocol: 'general', prompt, seconds: '5', references: [], ...over };
}

/** Polls until the task ends (bounded). */
export async function waitDone(client: GatewayClient, ref: TaskRef, createdAt = Date.now()): Promise<TaskStatus> {
  for (let i = 0; i < 200; i += 1) {
    const status = await client.getTask(ref, { createdAt });
    if (status.state === 'succeeded' || status.state === 'failed') return status;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`task ${ref.taskId} did not finish`);
}

export async function digest(body: Readable): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of body) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/** What a clean download of the same task gives, through a fresh client without faults. */
export async function referenceDigest(h: Harness, ref: TaskRef): Promise<{ bytes: number; sha256: string }> {
  const faults = h.sim.faults();
  h.sim.setFaults({ cutDownloadRate: 0, resetRate: 0, errorRate: 0, rateLimitRate: 0 });
  const clean = createGatewayClient({ baseUrls: h.sim.urls, apiKey: KEY });
  try {
    const d = await clean.openVideo(ref);
    return await digest(d.body);
  } finally {
    await clean.close();
    h.sim.setFaults(faults);
  }
}

export function assertNoKey(text: string): void {
  if (text.includes(KEY)) throw new Error('the API key leaked');
}
