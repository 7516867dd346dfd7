// Shared by the simulator's integration tests: start/stop around a body, and a raw node:http client
// that reports connection-level outcomes (reset, premature close) that fetch would blur together.
import { request } from 'node:http';
import { startSimulator, type SimHandleExt, type SimOptionsExt } from '../../../sim/index';

export const KEY = 'sk-sim-test-key';
export const AUTH = { authorization: `Bearer ${KEY}` };
export const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' };

export async function withSim<T>(opts: SimOptionsExt, body: (sim: SimHandleExt) => Promise<T>): Promise<T> {
  const sim = await startSimulator({ keys: [KEY], ...opts });
  try {
    return await body(sim);
  } finally {
    await sim.close();
  }
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** Set when the body ended before Content-Length (or the socket died mid-body). */
  aborted: boolean;
}

export type RawResult = RawResponse | { error: string };

/** One request on a fresh connection; resolves with the response or the socket error code. */
export function raw(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number } = {},
): Promise<RawResult> {
  return new Promise((resolve) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let aborted = false;
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('aborted', () => (aborted = true));
      res.on('error', () => (aborted = true));
      res.on('close', () => {
        const body = Buffer.concat(chunks);
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && body.length < declared) aborted = true;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, aborted });
      });
    });
    if (init.timeoutMs) {
      req.setTimeout(init.timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    }
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end(init.body);
  });
}

export function ok(r: RawResult): RawResponse {
  if ('error' in r) throw new Error(`expected a response, got ${r.error}`);
  return r;
}

export function json(r: RawResult): unknown {
  return JSON.parse(ok(r).body.toString('utf8'));
}

export async function createGeneral(base: string, body: Record<string, unknown>): Promise<string> {
  const r = ok(await raw(`${base}/v1/video/generations`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify(body) }));
  if (r.status !== 200) throw new Error(`create failed: ${r.status} ${r.body.toString()}`);
  return (JSON.parse(r.body.toString()) as { id: string }).id;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls the general retrieve until a final status; returns the data object. */
export async function waitFinal(base: string, id: string, limitMs = 10_000): Promise<Record<string, unknown>> {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    const r = json(await raw(`${base}/v1/video/generations/${id}`, { headers: AUTH })) as { data: Record<string, unknown> };
    if (r.data['status'] === 'SUCCESS' || r.data['status'] === 'FAILURE') return r.data;
    await sleep(20);
  }
  throw new Error(`task ${id} did not finish in ${limitMs} ms`);
}
