// 1 GiB download from the simulator on loopback: the worker's download path (gateway client into
// LocalStorage: sha256, part file, fsync, rename) vs curl on the same URL into a file it then
// fsyncs. Prints throughput, the ratio to curl and the client's RSS growth; the last line is one
// JSON object. The simulator runs in a child process (this file with --serve) so that it does
// not share the client's event loop and the client's RSS is measured alone, as curl's would be.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createGatewayClient } from '../gateway/index';
import { startSimulator } from '../sim/index';
import { LocalStorage, hashFile } from '../storage/index';

const BYTES = Number(process.env.BENCH_VIDEO_BYTES ?? 1024 ** 3);
const KEY = 'sk-bench-local-key';
const MIB = 1024 * 1024;
// Async on purpose: the simulator serves from this very process.
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
async function curlToDurableFile(url: string, file: string): Promise<{ bytes: number; seconds: number; fsyncSeconds: number; sha256: string }> {
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
  // Outside the timings: the client's sha256 is checked against this one.
  const sha256 = await hashFile(file);
  rmSync(file);
  return { bytes: Number(out[0]), seconds: Number(out[1]), fsyncSeconds, sha256 };
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

    // Warm-up (the simulator prepares the video on first use), then the baseline.
    await run('curl', ['-s', '-o', '/dev/null', '-H', `Authorization: Bearer ${KEY}`, url]);
    const curl = await curlToDurableFile(url, join(dir, 'curl.mp4'));

    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 50);
    const t0 = process.hrtime.bigint();
    // The worker's download activity exactly: openVideo into LocalStorage.write, which hashes,
    // fsyncs the part and renames it.
    const video = await client.openVideo({ taskId: created.taskId, protocol: 'openai' });
    const written = await new LocalStorage(dir).write('client.mp4', video.body,
      video.totalBytes !== undefined ? { expectedBytes: video.totalBytes } : {});
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    const clientBytes = (await stat(written.location)).size;
    if (clientBytes !== BYTES || curl.bytes !== BYTES) throw new Error(`size mismatch: client ${clientBytes}, curl ${curl.bytes}, want ${BYTES}`);
    if (written.sha256 !== curl.sha256) throw new Error(`sha256 mismatch: client ${written.sha256}, curl's file ${curl.sha256}`);
    const clientMiBs = clientBytes / MIB / seconds;
    const curlMiBs = curl.bytes / MIB / curl.seconds;
    const durableCurlMiBs = curl.bytes / MIB / (curl.seconds + curl.fsyncSeconds);
    const ratio = clientMiBs / durableCurlMiBs;
    const growthMiB = (peak - rss0) / MIB;
    const [load1] = loadavg();
    console.log(`curl:   ${curlMiBs.toFixed(0)} MiB/s to the page cache, ${durableCurlMiBs.toFixed(0)} MiB/s with the fsync `
      + `(${curl.fsyncSeconds.toFixed(2)} s)`);
    console.log(`client: ${clientMiBs.toFixed(0)} MiB/s (${seconds.toFixed(2)} s, sha256 and fsync included), `
      + `RSS growth ${growthMiB.toFixed(1)} MiB; ${(clientMiBs / curlMiBs).toFixed(3)} x curl without its fsync; load ${load1?.toFixed(2)}`);
    console.log(JSON.stringify({ figure: 'download_1gib_throughput_vs_curl', value: Number(clientMiBs.toFixed(1)), unit: 'MiB/s',
      baseline: Number(durableCurlMiBs.toFixed(1)), ratio: Number(ratio.toFixed(3)), target: '>= 0.9 x curl, RSS growth <= 64 MiB',
      meets: ratio >= 0.9 && growthMiB <= 64, rssGrowthMiB: Number(growthMiB.toFixed(1)),
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
