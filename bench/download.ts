// 1 GiB download from the simulator on loopback: the worker's download path (gateway client into
// LocalStorage: sha256, part file, fsync, rename) vs curl on the same URL into a file it then
// fsyncs, in two settings: as fast as loopback goes, and paced to a network link's rate
// (--mbps, default 100 MB/s; 0 skips it). Optionally also the write path of other checkouts
// (--compare LABEL=DIR, DIR holding another version's storage/ folder, e.g. from
// `git archive COMMIT storage | tar -x -C test-output/before`), measured in the same rounds.
// Rounds (--rounds, default 3) rotate which contestant goes first (the disk's state after one
// write slows the next); medians are compared. Per contestant: MiB/s and its ratio to curl with
// its fsync, CPU seconds per GiB of this process (all threads), RSS growth. The simulator (and
// the pacing proxy) run in a child process (this file with --serve), so that they do not share
// the client's event loop and the client's CPU and RSS are measured alone, as curl's would be.
//
//   npm run bench -- download [--rounds 3] [--mbps 100] [--compare before=test-output/before/storage]
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs, promisify } from 'node:util';
import { createGatewayClient, type GatewayClient } from '../gateway/index';
import { startSimulator } from '../sim/index';
import { LocalStorage } from '../storage/index';
import type { WriteResult } from '../storage/objects/store';
import { median } from './lib/report';

const { values: flags } = parseArgs({
  options: {
    serve: { type: 'boolean' },
    rounds: { type: 'string', default: '3' },
    mbps: { type: 'string', default: '100' },
    compare: { type: 'string', multiple: true, default: [] },
  },
  allowPositionals: true,
});
const BYTES = Number(process.env.BENCH_VIDEO_BYTES ?? 1024 ** 3);
const ROUNDS = Math.max(1, Number(flags.rounds));
const PACED_MBPS = Number(flags.mbps);
const KEY = 'sk-bench-local-key';
const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
// Runs curl (the baseline) and sha256sum.
const run = promisify(execFile);

/** Sends each response body no faster than `bytesPerSecond`, as a link of that rate would. */
function paced(bytesPerSecond: number): Transform {
  const start = performance.now();
  let sent = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      sent += chunk.length;
      const wait = start + (sent / bytesPerSecond) * 1000 - performance.now();
      if (wait > 0) setTimeout(() => callback(null, chunk), wait);
      else callback(null, chunk);
    },
  });
}

/** The simulator, and a proxy in front of it whose responses are paced; prints both addresses. */
async function serve(): Promise<void> {
  const sim = await startSimulator({ keys: [KEY], renderMs: 10, videoBytes: BYTES });
  const target = new URL(sim.urls[0] ?? '');
  const proxy = createServer((req, res) => {
    const upstream = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        pipeline(answer, paced(PACED_MBPS * 1e6), res).catch(() => res.destroy());
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  const pacedUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  process.stdout.write(`${JSON.stringify({ url: sim.urls[0], pacedUrl })}\n`);
  process.stdin.resume();
  await once(process.stdin, 'end');
  proxy.closeAllConnections();
  proxy.close();
  await sim.close();
}

async function startChildSim(): Promise<{ url: string; pacedUrl: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', __filename, '--serve', '--mbps', String(PACED_MBPS)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: process.env,
  });
  let out = '';
  for await (const chunk of child.stdout) {
    out += String(chunk);
    if (out.includes('\n')) break;
  }
  const { url, pacedUrl } = JSON.parse(out.split('\n')[0] ?? '{}') as { url: string; pacedUrl: string };
  return { url, pacedUrl, stop: () => child.stdin.end() };
}

interface Run {
  seconds: number;
  /** Client only: CPU seconds of this process (all threads) per GiB, and its RSS growth. */
  cpuPerGiB?: number;
  rssGrowthMiB?: number;
}
interface Contestant {
  label: string;
  /** Downloads the video: curl from `url`, the client through `client` (the same address). */
  download(url: string, client: GatewayClient): Promise<Run & { bytes: number; sha256: string }>;
}

/**
 * The baseline doing the client's job minus the hashing: the same URL into a durable file in the
 * same directory. curl does not fsync, so its file is fsynced after it exits and that time is
 * added (the client's time includes the fsync that LocalStorage does before the rename).
 */
function curlContestant(dir: string): Contestant {
  return {
    label: 'curl + fsync',
    async download(url) {
      const file = join(dir, 'curl.mp4');
      const t0 = process.hrtime.bigint();
      const bytes = Number(
        (await run('curl', ['-s', '-o', file, '-w', '%{size_download}', '-H', `Authorization: Bearer ${KEY}`, url])).stdout,
      );
      const handle = await open(file, 'r+');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      // Outside the timing: the client's sha256 is checked against this one, hashed by another
      // process so that neither the client's RSS baseline nor its CPU count it.
      const sha256 = (await run('sha256sum', [file])).stdout.split(' ')[0] ?? '';
      rmSync(file);
      return { seconds, bytes, sha256 };
    },
  };
}

type Write = (dir: string, name: string, body: Readable, options: { expectedBytes?: number }) => Promise<WriteResult>;

/** The worker's download activity exactly: openVideo into a LocalStorage's write (sha256, part file, fsync, rename). */
function clientContestant(label: string, taskId: string, dir: string, write: Write): Contestant {
  return {
    label,
    async download(_url, client) {
      global.gc?.();
      const rss0 = process.memoryUsage().rss;
      let peak = rss0;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 50);
      const cpu0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      const video = await client.openVideo({ taskId, protocol: 'openai' });
      const written = await write(dir, 'client.mp4', video.body, video.totalBytes !== undefined ? { expectedBytes: video.totalBytes } : {});
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const cpu = process.cpuUsage(cpu0);
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      const bytes = (await stat(written.location)).size;
      await rm(written.location);
      return {
        seconds,
        bytes,
        sha256: written.sha256,
        cpuPerGiB: ((cpu.user + cpu.system) / 1e6) * (GIB / bytes),
        rssGrowthMiB: (peak - rss0) / MIB,
      };
    },
  };
}

/** Another checkout's LocalStorage (its storage/ folder), loaded beside this one's. */
function comparedWrite(folder: string): Write {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a module chosen at run time, from the same tsx loader
  const other = require(join(resolve(folder), 'local.ts')) as { LocalStorage: typeof LocalStorage };
  return (dir, name, body, options) => new other.LocalStorage(dir).write(name, body, options);
}

const mibs = (r: Run): number => BYTES / MIB / r.seconds;

function summary(label: string, runs: Run[], baseline: number): string {
  const rate = median(runs.map(mibs));
  const client =
    runs[0]?.cpuPerGiB === undefined
      ? ''
      : `, ${median(runs.map((r) => r.cpuPerGiB!)).toFixed(2)} CPU-s/GiB, RSS growth median ${median(runs.map((r) => r.rssGrowthMiB!)).toFixed(1)} ` +
        `max ${Math.max(...runs.map((r) => r.rssGrowthMiB!)).toFixed(1)} MiB`;
  return `  ${label.padEnd(14)} ${rate.toFixed(0).padStart(5)} MiB/s  ${(rate / baseline).toFixed(3)} x curl + fsync${client}`;
}

async function main(): Promise<void> {
  const sim = await startChildSim();
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-bench-'));
  const client = createGatewayClient({ baseUrls: [sim.url], apiKey: KEY });
  const pacedClient = createGatewayClient({ baseUrls: [sim.pacedUrl], apiKey: KEY });
  try {
    const created = await client.createTask({
      model: 'veo-3.1-fast-generate-001',
      protocol: 'openai',
      prompt: 'bench',
      seconds: '4',
      references: [],
    });
    for (let i = 0; i < 500; i += 1) {
      const s = await client.getTask({ taskId: created.taskId, protocol: 'openai' });
      if (s.state === 'succeeded') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const contentPath = `/v1/videos/${created.taskId}/content`;
    const here: Write = (d, name, body, options) => new LocalStorage(d).write(name, body, options);
    const contestants = [
      curlContestant(dir),
      clientContestant('this tree', created.taskId, dir, here),
      ...(flags.compare ?? []).map((spec) => {
        const [label = '', folder = ''] = spec.split('=');
        return clientContestant(label, created.taskId, dir, comparedWrite(folder));
      }),
    ];
    const settings = [
      { label: 'loopback, unpaced', url: sim.url + contentPath, client },
      ...(PACED_MBPS > 0 ? [{ label: `paced to ${PACED_MBPS} MB/s`, url: sim.pacedUrl + contentPath, client: pacedClient }] : []),
    ];
    // Warm-up: the simulator prepares the video on first use.
    await run('curl', ['-s', '-o', '/dev/null', '-H', `Authorization: Bearer ${KEY}`, sim.url + contentPath]);
    const runs = settings.map(() => contestants.map((): Run[] => []));
    for (let round = 0; round < ROUNDS; round++) {
      const order = contestants.map((_, i) => (i + round) % contestants.length);
      for (const [s, setting] of settings.entries()) {
        const line: string[] = [];
        let sha256: string | undefined;
        for (const c of order) {
          const contestant = contestants[c]!;
          const result = await contestant.download(setting.url, setting.client);
          if (result.bytes !== BYTES) throw new Error(`${contestant.label}: ${result.bytes} bytes, want ${BYTES}`);
          if ((sha256 ??= result.sha256) !== result.sha256)
            throw new Error(`${contestant.label}: sha256 ${result.sha256}, others ${sha256}`);
          runs[s]![c]!.push(result);
          line.push(
            `${contestant.label} ${mibs(result).toFixed(0)} MiB/s${result.cpuPerGiB === undefined ? '' : ` (${result.cpuPerGiB.toFixed(2)} CPU-s/GiB, RSS +${result.rssGrowthMiB!.toFixed(1)} MiB)`}`,
          );
        }
        console.log(`round ${round + 1}, ${setting.label}: ${line.join('; ')}`);
      }
    }
    const [load1] = loadavg();
    console.log(`medians of ${ROUNDS} rounds (load ${load1?.toFixed(2)} at the end):`);
    const ratios = settings.map((setting, s) => {
      const baseline = median(runs[s]![0]!.map(mibs));
      console.log(`${setting.label}:`);
      contestants.forEach((c, i) => console.log(summary(c.label, runs[s]![i]!, baseline)));
      return { baseline, value: median(runs[s]![1]!.map(mibs)) };
    });
    const ours = runs.flatMap((perSetting) => perSetting[1]!);
    const growthMiB = Math.max(...ours.map((r) => r.rssGrowthMiB!));
    const unpaced = ratios[0]!;
    const ratio = unpaced.value / unpaced.baseline;
    const pacedRatio = ratios[1] ? Number((ratios[1].value / ratios[1].baseline).toFixed(3)) : null;
    console.log(
      JSON.stringify({
        figure: 'download_1gib_throughput_vs_curl',
        value: Number(unpaced.value.toFixed(1)),
        unit: 'MiB/s',
        baseline: Number(unpaced.baseline.toFixed(1)),
        ratio: Number(ratio.toFixed(3)),
        target: '>= 0.9 x curl, RSS growth <= 64 MiB',
        meets: ratio >= 0.9 && growthMiB <= 64,
        rssGrowthMiB: Number(growthMiB.toFixed(1)),
        rounds: ROUNDS,
        cpuPerGiB: Number(median(runs[0]![1]!.map((r) => r.cpuPerGiB!)).toFixed(2)),
        pacedMBps: PACED_MBPS || null,
        pacedRatio,
      }),
    );
  } finally {
    await client.close();
    await pacedClient.close();
    sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

(flags.serve ? serve() : main()).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
