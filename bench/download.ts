// 1 GiB download from the simulator on loopback: the worker's download path (gateway client into
// LocalStorage: sha256, part file, fsync, rename) vs curl on the same URL into a file it then
// fsyncs. BENCH_ROUNDS rounds (3) alternate which goes first; the medians are compared, and the
// ratio to curl without its fsync is printed too. Also the client's RSS growth (the largest of the
// rounds); the last line is one JSON object. The simulator runs in a child process (this file
// with --serve) so that it does not share the client's event loop and the client's RSS is
// measured alone, as curl's would be.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createGatewayClient, type GatewayClient } from '../gateway/index';
import { startSimulator } from '../sim/index';
import { LocalStorage } from '../storage/index';
import { median } from './lib/report';

const BYTES = Number(process.env.BENCH_VIDEO_BYTES ?? 1024 ** 3);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const KEY = 'sk-bench-local-key';
const MIB = 1024 * 1024;
// Runs curl (the baseline) and sha256sum.
const run = promisify(execFile);

async function serve(): Promise<void> {
  const sim = await startSimulator({ keys: [KEY], renderMs: 10, videoBytes: BYTES });
  process.stdout.write(`${JSON.stringify({ urls: sim.urls })}\n`);
  process.stdin.resume();
  await once(process.stdin, 'end');
  await sim.close();
}

async function startChildSim(): Promise<{ urls: string[]; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', __filename, '--serve'], { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
  let out = '';
  for await (const chunk of child.stdout) {
    out += String(chunk);
    if (out.includes('\n')) break;
  }
  const { urls } = JSON.parse(out.split('\n')[0] ?? '{}') as { urls: string[] };
  return { urls, stop: () => child.stdin.end() };
}

/**
 * The baseline doing the client's job minus the hashing: the same URL into a durable file in the
 * same directory. curl does not fsync, so its file is fsynced after it exits and that time is
 * added (the client's time includes the fsync that LocalStorage does before the rename).
 */
async function curlToDurableFile(url: string, file: string): Promise<CurlRun> {
  const out = (await run('curl', ['-s', '-o', file, '-w', '%{size_download} %{time_total}',
    '-H', `Authorization: Bearer ${KEY}`, url])).stdout.trim().split(' ');
  const t0 = process.hrtime.bigint();
  const handle = await open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  const fsyncSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
  // Outside the timings: the client's sha256 is checked against this one. Hashed by another
  // process, so that neither the client's RSS baseline nor its hashing thread is touched before
  // the measured download.
  const sha256 = (await run('sha256sum', [file])).stdout.split(' ')[0] ?? '';
  rmSync(file);
  return { bytes: Number(out[0]), seconds: Number(out[1]), fsyncSeconds, sha256 };
}

interface CurlRun { bytes: number; seconds: number; fsyncSeconds: number; sha256: string }
interface ClientRun { bytes: number; seconds: number; sha256: string; rssGrowthMiB: number }

const mibs = (seconds: number): number => BYTES / MIB / seconds;

/** The worker's download activity exactly: openVideo into LocalStorage.write (sha256, part file, fsync, rename). */
async function clientDownload(client: GatewayClient, taskId: string, dir: string): Promise<ClientRun> {
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 50);
  const t0 = process.hrtime.bigint();
  const video = await client.openVideo({ taskId, protocol: 'openai' });
  const written = await new LocalStorage(dir).write('client.mp4', video.body,
    video.totalBytes !== undefined ? { expectedBytes: video.totalBytes } : {});
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  const bytes = (await stat(written.location)).size;
  await rm(written.location);
  return { bytes, seconds, sha256: written.sha256, rssGrowthMiB: (peak - rss0) / MIB };
}

async function main(): Promise<void> {
  const sim = await startChildSim();
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-bench-'));
  const client = createGatewayClient({ baseUrls: sim.urls, apiKey: KEY });
  try {
    const created = await client.createTask({ model: 'sora-2', protocol: 'openai', prompt: 'bench', seconds: '4', references: [] });
    for (let i = 0; i < 500; i += 1) {
      const s = await client.getTask({ taskId: created.taskId, protocol: 'openai' });
      if (s.state === 'succeeded') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const url = `${sim.urls[0] ?? ''}/v1/videos/${created.taskId}/content`;

    // Warm-up (the simulator prepares the video on first use). Then rounds that alternate which
    // of the two goes first (the disk's state after one write slows the next), medians compared.
    await run('curl', ['-s', '-o', '/dev/null', '-H', `Authorization: Bearer ${KEY}`, url]);
    const curls: CurlRun[] = [];
    const clients: ClientRun[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const clientFirst = round % 2 === 1;
      if (clientFirst) clients.push(await clientDownload(client, created.taskId, dir));
      curls.push(await curlToDurableFile(url, join(dir, 'curl.mp4')));
      if (!clientFirst) clients.push(await clientDownload(client, created.taskId, dir));
      const c = curls.at(-1)!;
      const k = clients.at(-1)!;
      if (k.bytes !== BYTES || c.bytes !== BYTES) throw new Error(`size mismatch: client ${k.bytes}, curl ${c.bytes}, want ${BYTES}`);
      if (k.sha256 !== c.sha256) throw new Error(`sha256 mismatch: client ${k.sha256}, curl's file ${c.sha256}`);
      console.log(`round ${round + 1}: curl ${mibs(c.seconds).toFixed(0)} MiB/s to the page cache, ${mibs(c.seconds + c.fsyncSeconds).toFixed(0)} `
        + `with its fsync; client ${mibs(k.seconds).toFixed(0)} MiB/s (sha256 and fsync included), RSS growth ${k.rssGrowthMiB.toFixed(1)} MiB`);
    }
    const clientMiBs = median(clients.map((k) => mibs(k.seconds)));
    const curlMiBs = median(curls.map((c) => mibs(c.seconds)));
    const durableCurlMiBs = median(curls.map((c) => mibs(c.seconds + c.fsyncSeconds)));
    const ratio = clientMiBs / durableCurlMiBs;
    const growthMiB = Math.max(...clients.map((k) => k.rssGrowthMiB));
    const [load1] = loadavg();
    console.log(`medians of ${ROUNDS}: curl ${curlMiBs.toFixed(0)} MiB/s to the page cache, ${durableCurlMiBs.toFixed(0)} MiB/s with the fsync; `
      + `client ${clientMiBs.toFixed(0)} MiB/s: ${ratio.toFixed(3)} x curl with its fsync, ${(clientMiBs / curlMiBs).toFixed(3)} x without; `
      + `largest RSS growth ${growthMiB.toFixed(1)} MiB; load ${load1?.toFixed(2)}`);
    console.log(JSON.stringify({ figure: 'download_1gib_throughput_vs_curl', value: Number(clientMiBs.toFixed(1)), unit: 'MiB/s',
      baseline: Number(durableCurlMiBs.toFixed(1)), ratio: Number(ratio.toFixed(3)), target: '>= 0.9 x curl, RSS growth <= 64 MiB',
      meets: ratio >= 0.9 && growthMiB <= 64, rssGrowthMiB: Number(growthMiB.toFixed(1)), rounds: ROUNDS,
      curlWithoutFsyncMiBs: Number(curlMiBs.toFixed(1)), ratioToCurlWithoutFsync: Number((clientMiBs / curlMiBs).toFixed(3)) }));
  } finally {
    await client.close();
    sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

(process.argv.includes('--serve') ? serve() : main()).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
