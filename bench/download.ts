// 1 GiB download from the simulator on loopback: the gateway client streaming to a file vs curl on
// the same URL. Prints throughput, the ratio to curl and the client's RSS growth; the last line is
// one JSON object. The simulator runs in a child process (this file with --serve) so that it does
// not share the client's event loop and the client's RSS is measured alone, as curl's would be.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, rmSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createGatewayClient } from '../gateway/index';
import { startSimulator } from '../sim/index';

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

    // Warm-up (the simulator prepares the video on first use), then curl as the baseline doing the
    // same job as the client: the same URL into a file in the same directory.
    await run('curl', ['-s', '-o', '/dev/null', '-H', `Authorization: Bearer ${KEY}`, url]);
    const curlFile = join(dir, 'curl.mp4');
    const curlOut = (await run('curl', ['-s', '-o', curlFile, '-w', '%{size_download} %{time_total}',
      '-H', `Authorization: Bearer ${KEY}`, url])).stdout.trim().split(' ');
    rmSync(curlFile);
    const curlBytes = Number(curlOut[0]);
    const curlMiBs = curlBytes / MIB / Number(curlOut[1]);

    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 50);
    const t0 = process.hrtime.bigint();
    const video = await client.openVideo({ taskId: created.taskId, protocol: 'openai' });
    await pipeline(video.body, createWriteStream(join(dir, 'client.mp4'), { highWaterMark: MIB }));
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    const clientBytes = (await stat(join(dir, 'client.mp4'))).size;
    if (clientBytes !== BYTES || curlBytes !== BYTES) throw new Error(`size mismatch: client ${clientBytes}, curl ${curlBytes}, want ${BYTES}`);
    const clientMiBs = clientBytes / MIB / seconds;
    const ratio = clientMiBs / curlMiBs;
    const growthMiB = (peak - rss0) / MIB;
    console.log(`curl:   ${curlMiBs.toFixed(0)} MiB/s`);
    console.log(`client: ${clientMiBs.toFixed(0)} MiB/s (${seconds.toFixed(2)} s), RSS growth ${growthMiB.toFixed(1)} MiB`);
    console.log(JSON.stringify({ figure: 'download_1gib_throughput_vs_curl', value: Number(clientMiBs.toFixed(1)), unit: 'MiB/s',
      baseline: Number(curlMiBs.toFixed(1)), ratio: Number(ratio.toFixed(3)), target: '>= 0.9 x curl, RSS growth <= 64 MiB',
      meets: ratio >= 0.9 && growthMiB <= 64, rssGrowthMiB: Number(growthMiB.toFixed(1)) }));
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
