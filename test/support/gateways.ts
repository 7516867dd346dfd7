// Real gateways for the gateway tests, each in front of a fake upstream (fake-upstream.ts), on
// 127.0.0.1 and free ports: the LiteLLM proxy (scripts/litellm.sh) and new-api (scripts/new-api.sh),
// both provisioned into the tool cache by the project's scripts. Each runs in its own process group
// and is stopped by that group, so no worker process it forks outlives the test.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { latestRowByKey, type ManifestRow } from '../../storage/manifest/row';
import type { FakeUpstream } from './fake-upstream';
import { freePort } from './s3-server';

export interface Gateway {
  /** Root address, no path. */
  url: string;
  /** The key a client (reelflow) sends. */
  key: string;
  pid: number;
  /** The gateway's recent output, for failure messages. */
  output(): string;
  stop(): Promise<void>;
  /** new-api: enables or disables the client key's token through the admin API, as an operator would. */
  setKeyEnabled?(enabled: boolean): Promise<void>;
}

/**
 * Model names the gateways serve; each maps to the same name at the fake upstream. The openai
 * protocol's is Veo 3.1 Fast through each gateway's Gemini provider (Sora 2 was shut down on 2026-09-24).
 */
export const GATEWAY_MODELS = {
  openai: 'veo-3.1-fast-generate-001',
  general: 'seedance-1-0-pro-250528',
  messages: 'claude-sonnet-4-6',
} as const;
/** A model LiteLLM lists but the upstream does not know: shows how LiteLLM wraps upstream errors. */
export const UPSTREAM_UNKNOWN_MODEL = 'upstream-unknown';

const REPO = resolve(__dirname, '..', '..');
const START_TIMEOUT_MS = 180_000;

/** A provisioning script's `--print-path`, or the environment variable that overrides it. */
async function provisioned(script: string, envVar: string): Promise<string> {
  const fromEnv = process.env[envVar];
  if (fromEnv) return fromEnv;
  try {
    const { stdout } = await promisify(execFile)('bash', [join(REPO, 'scripts', script), '--print-path'], { timeout: 30 * 60_000 });
    return stdout.trim();
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`cannot provision (scripts/${script} --print-path): ${stderr.trim() || String(err)}`);
  }
}

/**
 * The LiteLLM proxy with no database, a master key as the client key, and
 * `router_settings.num_retries: 0`: its default (2) re-sends a create upstream after an upstream
 * 500, three paid renders for one create.
 */
export async function startLiteLLM(upstream: FakeUpstream): Promise<Gateway> {
  const binary = await provisioned('litellm.sh', 'REELFLOW_LITELLM_BIN');
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-litellm-'));
  const key = `sk-litellm-${randomBytes(12).toString('hex')}`;
  const openai = (name: string, upstreamModel: string) => ({
    model_name: name,
    litellm_params: { model: `openai/${upstreamModel}`, api_base: `${upstream.url}/v1`, api_key: upstream.apiKey },
  });
  const config = {
    model_list: [
      // LiteLLM's Gemini provider speaks the Gemini API's Veo operations to api_base (docs/gateways.md).
      {
        model_name: GATEWAY_MODELS.openai,
        litellm_params: { model: `gemini/${GATEWAY_MODELS.openai}`, api_base: upstream.url, api_key: upstream.apiKey },
      },
      openai(UPSTREAM_UNKNOWN_MODEL, 'no-such-model'),
      {
        model_name: GATEWAY_MODELS.messages,
        litellm_params: { model: `anthropic/${GATEWAY_MODELS.messages}`, api_base: upstream.url, api_key: upstream.apiKey },
      },
    ],
    general_settings: { master_key: key },
    router_settings: { num_retries: 0 },
  };
  await writeFile(join(dir, 'config.yaml'), stringify(config));
  const port = await freePort();
  const child = spawnGroup(
    binary,
    ['--config', join(dir, 'config.yaml'), '--host', '127.0.0.1', '--port', String(port), '--num_workers', '1'],
    {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: dir,
        // Offline: the bundled model price map instead of a download at every start, no telemetry.
        LITELLM_LOCAL_MODEL_COST_MAP: 'True',
        LITELLM_TELEMETRY: 'False',
        NO_DOCS: 'True',
        PYTHONUNBUFFERED: '1',
      },
    },
  );
  const url = `http://127.0.0.1:${port}`;
  return started(child.process, child.output, url, key, dir, `${url}/health/liveliness`);
}

export interface NewApiOptions {
  /** The operator's ServerAddress setting; new-api's default is http://localhost:3000. */
  serverAddress?: string;
}

/**
 * new-api with SQLite in a temporary directory, configured headlessly through its admin API:
 * first-run setup, a Seedance (54), a Gemini (24, Veo) and an Anthropic (14) channel pointing at the fake
 * upstream, per-call prices for their models, and a token with unlimited quota as the client key.
 */
export async function startNewApi(upstream: FakeUpstream, options: NewApiOptions = {}): Promise<Gateway> {
  const binary = await provisioned('new-api.sh', 'REELFLOW_NEW_API_BIN');
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-new-api-'));
  const port = await freePort();
  const child = spawnGroup(binary, ['--port', String(port), '--log-dir', join(dir, 'logs')], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      SQLITE_PATH: `${join(dir, 'new-api.db')}?_busy_timeout=30000`,
      SESSION_SECRET: randomBytes(16).toString('hex'),
      TZ: 'UTC',
    },
  });
  const url = `http://127.0.0.1:${port}`;
  const gateway = await started(child.process, child.output, url, '', dir, `${url}/api/status`);
  try {
    const { key, setKeyEnabled } = await configureNewApi(url, upstream, options);
    return { ...gateway, key, setKeyEnabled };
  } catch (err) {
    await gateway.stop();
    throw err;
  }
}

async function configureNewApi(
  url: string,
  upstream: FakeUpstream,
  options: NewApiOptions,
): Promise<{ key: string; setKeyEnabled(enabled: boolean): Promise<void> }> {
  const password = randomBytes(12).toString('hex');
  await adminCall(url, 'POST', '/api/setup', {
    username: 'root',
    password,
    confirmPassword: password,
    SelfUseModeEnabled: false,
    DemoSiteEnabled: false,
  });
  const login = await fetch(`${url}/api/user/login`, {
    method: 'POST',
    body: JSON.stringify({ username: 'root', password }),
    headers: { 'content-type': 'application/json' },
  });
  const user = (await login.json()) as { success: boolean; message: string; data?: { id: number } };
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  if (!user.success || !user.data || !cookie) throw new Error(`new-api login failed: ${user.message}`);
  const session = { cookie, 'New-Api-User': String(user.data.id) };

  const channels = [
    { type: 54, name: 'seedance', models: GATEWAY_MODELS.general },
    { type: 24, name: 'veo', models: GATEWAY_MODELS.openai },
    { type: 14, name: 'anthropic', models: GATEWAY_MODELS.messages },
  ];
  for (const channel of channels) {
    await adminCall(
      url,
      'POST',
      '/api/channel/',
      {
        mode: 'single',
        channel: { ...channel, key: upstream.apiKey, base_url: upstream.url, group: 'default', auto_ban: 0 },
      },
      session,
    );
  }
  // Per-call prices: without one, a non-chat model is refused (and the default would do for video,
  // but the Messages model has no default ratio). ModelPrice is one JSON map: merge into it.
  const all = (await adminCall(url, 'GET', '/api/option/', undefined, session)) as Array<{ key: string; value: string }>;
  const prices = JSON.parse(all.find((o) => o.key === 'ModelPrice')?.value ?? '{}') as Record<string, number>;
  for (const model of Object.values(GATEWAY_MODELS)) prices[model] = 0.01;
  await adminCall(url, 'PUT', '/api/option/', { key: 'ModelPrice', value: JSON.stringify(prices) }, session);
  if (options.serverAddress) await adminCall(url, 'PUT', '/api/option/', { key: 'ServerAddress', value: options.serverAddress }, session);

  await adminCall(url, 'POST', '/api/token/', { name: 'reelflow', remain_quota: 0, unlimited_quota: true, expired_time: -1 }, session);
  const tokens = (await adminCall(url, 'GET', '/api/token/?p=1&size=10', undefined, session)) as {
    items: Array<{ id: number; name: string; key: string }>;
  };
  const token = tokens.items.find((t) => t.name === 'reelflow');
  if (!token?.key) throw new Error('new-api created no readable token');
  // The console's switch: only the status changes (1 enabled, 2 disabled).
  const setKeyEnabled = async (enabled: boolean): Promise<void> => {
    await adminCall(url, 'PUT', '/api/token/?status_only=true', { id: token.id, status: enabled ? 1 : 2 }, session);
  };
  return { key: `sk-${token.key}`, setKeyEnabled };
}

/** One admin API call; new-api answers 200 with `success: false` on errors, so check that. */
async function adminCall(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let answer: { success?: boolean; message?: string; data?: unknown } = {};
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    // not JSON: reported below
  }
  if (!res.ok || answer.success !== true) throw new Error(`new-api ${method} ${path}: HTTP ${res.status} ${text.slice(0, 500)}`);
  return answer.data;
}

function spawnGroup(
  binary: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): { process: ChildProcess; output: () => string } {
  // detached: its own process group, so stopping the group also stops the workers it forks.
  const child = spawn(binary, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-16_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return { process: child, output: () => output };
}

async function started(
  child: ChildProcess,
  output: () => string,
  url: string,
  key: string,
  dir: string,
  readyUrl: string,
): Promise<Gateway> {
  const pid = child.pid ?? 0;
  // A test process that dies early must not leave the gateway behind.
  const killOnExit = () => killGroup(pid, 'SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      killGroup(pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    // Forked workers may outlive the leader's exit: end the rest of the group too.
    killGroup(pid, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`${readyUrl}: the gateway exited during start-up (${child.exitCode ?? child.signalCode}): ${output().trim()}`);
    }
    try {
      if ((await fetch(readyUrl, { signal: AbortSignal.timeout(2000) })).ok) return { url, key, pid, output, stop };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error(`${readyUrl}: the gateway was not ready within ${START_TIMEOUT_MS / 1000} s: ${output().trim()}`);
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    if (pid > 0) process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** Create routes of both video protocols: the requests whose answer a lossy proxy may lose. */
const CREATE_PATHS = new Set(['/v1/video/generations', '/v1/videos']);

export interface LossyProxy {
  /** Root address, no path: a base address for a job in front of the gateway. */
  url: string;
  /** Markers whose create answer was lost, in order. */
  lost: string[];
  /** Paths of the downloads cut short, in order. */
  cut: string[];
  /** Requests that passed through whole, as `METHOD path`, with `(Range: status)` when one was asked (no other header: they carry the key). */
  passed: string[];
  stop(): Promise<void>;
}

export interface LossyProxyOptions {
  /** The first create whose body contains one of these loses its answer (each marker once). */
  loseCreates?: readonly string[];
  /** How many video downloads (`GET …/content`) to cut off halfway, the first ones that pass. */
  cutDownloads?: number;
}

/**
 * A reverse proxy in front of a gateway that loses what the network loses:
 * - a create's answer: the create is forwarded, its whole answer read (so the gateway has created
 *   and recorded the task, and the upstream has been paid), and then the client's connection is
 *   closed without a byte of it: a create whose outcome the client cannot know (docs/protocol.md §6);
 * - the second half of a video: the status and headers of the gateway's answer and half the body
 *   are sent, then the connection is closed, so the client must resume or start again.
 * Everything else passes through unchanged, streamed both ways.
 */
export async function startLossyProxy(target: string, options: LossyProxyOptions = {}): Promise<LossyProxy> {
  const pending = new Set(options.loseCreates ?? []);
  let cutsLeft = options.cutDownloads ?? 0;
  const lost: string[] = [];
  const cut: string[] = [];
  const passed: string[] = [];
  const targetUrl = new URL(target);

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const path = req.url ?? '/';
    const route = path.split('?')[0] ?? '';
    const marker = req.method === 'POST' && CREATE_PATHS.has(route) ? [...pending].find((m) => body.includes(m)) : undefined;
    if (marker !== undefined) pending.delete(marker);
    const out = request(
      { host: targetUrl.hostname, port: targetUrl.port, method: req.method, path, headers: { ...req.headers, host: targetUrl.host } },
      (answer) => {
        if (marker !== undefined) {
          answer.resume();
          answer.on('end', () => {
            lost.push(marker);
            req.socket.destroy();
          });
          return;
        }
        if (req.method === 'GET' && route.endsWith('/content') && answer.statusCode === 200 && cutsLeft > 0) {
          cutsLeft -= 1;
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () => {
            const video = Buffer.concat(chunks);
            cut.push(path);
            res.writeHead(200, answer.headers);
            // Let the half reach the client before the connection goes.
            res.write(video.subarray(0, Math.floor(video.length / 2)), () => setTimeout(() => req.socket.destroy(), 100));
          });
          return;
        }
        passed.push(`${req.method} ${path}${req.headers.range ? ` (${req.headers.range}: ${answer.statusCode})` : ''}`);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => req.socket.destroy());
    out.end(body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => forward(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolveListen());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lost,
    cut,
    passed,
    stop: () =>
      new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}

// ---- For the end-to-end tests through the gateways (litellm.test.ts, new-api.test.ts) ----

/** A base address where nothing listens: a port that was free a moment ago, now closed. */
export async function closedBaseUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}

export interface GatewayJobItem {
  id: string;
  prompt: string;
  model?: string;
  protocol?: 'general' | 'openai';
}

export interface GatewayJob {
  name: string;
  baseUrls: string[];
  /** `defaults:` lines, indented by the caller's two spaces (model, protocol, seconds, ...). */
  defaults: string[];
  items: GatewayJobItem[];
  /** Further top-level YAML lines (models:, retries:, ...). */
  extra?: string[];
}

/**
 * A job file for the gateway end-to-end tests, written into `dir`: every prompt rewritten through
 * the gateway's Messages endpoint first, polling for a loopback test, outputs in `<dir>/out`.
 */
export function writeGatewayJob(dir: string, job: GatewayJob): string {
  const items = job.items.flatMap((item) => [
    `  - id: ${item.id}`,
    `    prompt: ${JSON.stringify(item.prompt)}`,
    ...(item.model ? [`    model: ${item.model}`] : []),
    ...(item.protocol ? [`    protocol: ${item.protocol}`] : []),
  ]);
  const text = [
    'version: 1',
    `name: ${job.name}`,
    'gateway:',
    '  base_urls:',
    ...job.baseUrls.map((u) => `    - ${u}`),
    'defaults:',
    ...job.defaults.map((line) => `  ${line}`),
    'enhance:',
    `  model: ${GATEWAY_MODELS.messages}`,
    '  max_tokens: 100',
    '  system: Rewrite the idea as one cinematic shot.',
    'polling:',
    '  initial: 500ms',
    '  max: 5s',
    '  timeout: 3m',
    'output:',
    '  dir: ./out',
    ...(job.extra ?? []),
    'items:',
    ...items,
    '',
  ].join('\n');
  const path = join(dir, `${job.name}.yaml`);
  writeFileSync(path, text);
  return path;
}

/** Messages calls that reached the upstream (each a paid rewrite). */
export function upstreamMessages(upstream: FakeUpstream): number {
  return upstream.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/messages')).length;
}

/** The manifest's latest row for `id`, asserted to exist and to have ended in `state`. */
export function rowOf(rows: Map<string, ManifestRow>, id: string, state: ManifestRow['state']): ManifestRow {
  const row = rows.get(id);
  assert.ok(row, `no manifest row for ${id}`);
  assert.equal(row.state, state, JSON.stringify(row));
  return row;
}

/** The manifest's latest row per item key (a re-run appends rows; the last one counts). */
export function manifestRows(outDir: string): Map<string, ManifestRow> {
  const rows = readFileSync(join(outDir, 'manifest.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ManifestRow);
  return latestRowByKey(rows);
}

/**
 * Files under `root` whose bytes contain `secret`: the job's outputs, the worker's log and the
 * Temporal server's database (workflow history) must hold no key.
 */
export function filesContaining(root: string, secret: string): string[] {
  const found: string[] = [];
  const needle = Buffer.from(secret, 'utf8');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && statSync(path).size < 512 * 1024 * 1024 && readFileSync(path).includes(needle)) found.push(path);
    }
  };
  walk(root);
  return found;
}

/** Upstream requests (API calls and the file host alike) that carried `key` in a header or the body. */
export function upstreamRequestsWithKey(upstream: FakeUpstream, key: string): string[] {
  return upstream.requests
    .filter((r) => JSON.stringify(r.headers).includes(key) || r.body.includes(key))
    .map((r) => `${r.method} ${r.path}`);
}
