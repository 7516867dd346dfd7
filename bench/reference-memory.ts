// Memory of a create with a large local reference (streamed, never held whole): the gateway client in a
// process of its own makes one create with a 300 MiB reference (--mib) to a gateway on loopback
// that reads and counts the body without keeping it, and reports its peak RSS (VmHWM). The
// baseline is the same process making the same create with a 1 MiB reference, in the same run.
// Both protocols: the general one (base64 inline in the JSON body) and the openai one (multipart).
// Before streaming, the general body of a 300 MB reference took 1.2 GB of RSS, and a 420 MB one
// could not be built at all.
//
//   npm run bench -- reference-memory [--mib 300]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createGatewayClient } from '../gateway/index';
import type { Protocol } from '../jobfile/plan';
import { emit, fail, machineLine, say } from './lib/report';

const { values: flags } = parseArgs({
  options: { client: { type: 'string' }, mib: { type: 'string', default: '300' } },
  allowPositionals: true,
});
const MIB = 2 ** 20;
const KEY = 'sk-bench-reference-0123456789';
const TARGET_GROWTH_MIB = 64;

interface ClientRun {
  peakRss: number;
  ms: number;
}

/** In the child: one create, then its peak RSS and how long the create took, as JSON on stdout. */
async function runClient(spec: string): Promise<void> {
  const { url, path, protocol } = JSON.parse(spec) as { url: string; path: string; protocol: Protocol };
  const client = createGatewayClient({ baseUrls: [url], apiKey: KEY, allowPrivateTargets: true });
  const started = Date.now();
  await client.createTask({
    model: protocol === 'openai' ? 'veo-3.1-fast-generate-001' : 'seedance-1-0-pro-250528',
    protocol,
    prompt: 'a reference-memory bench',
    references: [{ kind: 'image', role: 'reference_image', source: path, local: true }],
  });
  const ms = Date.now() - started;
  await client.close();
  const peakKiB = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
  process.stdout.write(`${JSON.stringify({ peakRss: peakKiB * 1024, ms } satisfies ClientRun)}\n`);
}

/** A gateway that reads every body to its end, counting it, and answers with a task id. */
async function startSink(): Promise<{ url: string; received: number[]; close(): void }> {
  const received: number[] = [];
  const server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      received.push(bytes);
      const complete = Number(req.headers['content-length']) === bytes;
      res.writeHead(complete ? 200 : 400, { 'content-type': 'application/json' });
      res.end(JSON.stringify(complete ? { id: `task-${received.length}` } : { error: { message: 'short body' } }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** `bytes` of varied content (a random block that does not divide it), written in a stream. */
async function writeReference(path: string, bytes: number): Promise<void> {
  const block = randomBytes(MIB + 7);
  const out = createWriteStream(path);
  for (let left = bytes; left > 0; left -= block.length) {
    if (!out.write(left >= block.length ? block : block.subarray(0, left))) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

async function measure(url: string, path: string, protocol: Protocol): Promise<ClientRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', __filename, '--client', JSON.stringify({ url, path, protocol })], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`the client process exited with ${code}`);
  return JSON.parse(out.trim().split('\n').pop() ?? '') as ClientRun;
}

async function main(): Promise<void> {
  const mib = Number(flags.mib);
  if (!Number.isFinite(mib) || mib < 2 || mib > 383)
    throw new Error(`--mib must be 2..383 (the reference limit is 384 MiB), got ${flags.mib}`);
  say(`reference memory: one create with a ${mib} MiB local reference against one with 1 MiB; ${machineLine()}`);
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-bench-reference-'));
  const sink = await startSink();
  try {
    const small = join(dir, 'small.png');
    const large = join(dir, 'large.png');
    await writeReference(small, MIB);
    await writeReference(large, mib * MIB + 1);
    const results: Record<string, { small: ClientRun; large: ClientRun }> = {};
    for (const protocol of ['general', 'openai'] as const) {
      const smallRun = await measure(sink.url, small, protocol);
      const largeRun = await measure(sink.url, large, protocol);
      results[protocol] = { small: smallRun, large: largeRun };
      const sent = sink.received[sink.received.length - 1] ?? 0;
      say(
        `${protocol}: peak RSS ${(smallRun.peakRss / MIB).toFixed(1)} MiB with 1 MiB, ${(largeRun.peakRss / MIB).toFixed(1)} MiB ` +
          `with ${mib} MiB (+${((largeRun.peakRss - smallRun.peakRss) / MIB).toFixed(1)} MiB); the large create sent ` +
          `${(sent / MIB).toFixed(1)} MiB in ${(largeRun.ms / 1000).toFixed(2)} s (${(sent / MIB / (largeRun.ms / 1000)).toFixed(0)} MiB/s)`,
      );
    }
    const general = results.general!;
    const growth = (general.large.peakRss - general.small.peakRss) / MIB;
    const openaiGrowth = (results.openai!.large.peakRss - results.openai!.small.peakRss) / MIB;
    emit({
      figure: `create_peak_rss_growth_${mib}mib_reference`,
      value: growth,
      unit: 'MiB',
      baseline: general.small.peakRss / MIB,
      ratio: general.large.peakRss / general.small.peakRss,
      target: `peak RSS with a ${mib} MiB reference at most ${TARGET_GROWTH_MIB} MiB above the same create with 1 MiB`,
      meets: growth <= TARGET_GROWTH_MIB && openaiGrowth <= TARGET_GROWTH_MIB,
      generalPeakMiB: Number((general.large.peakRss / MIB).toFixed(1)),
      openaiGrowthMiB: Number(openaiGrowth.toFixed(1)),
      openaiPeakMiB: Number((results.openai!.large.peakRss / MIB).toFixed(1)),
      generalSeconds: general.large.ms / 1000,
    });
  } finally {
    sink.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (flags.client) runClient(flags.client).catch(fail);
else main().catch(fail);
