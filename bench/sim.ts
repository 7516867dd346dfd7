// Benchmark of the gateway simulator itself: it must never be the bottleneck of other benchmarks.
//   status checks/s: keep-alive undici pool, bounded count, loopback only (target >= 2,000/s)
//   download MB/s:   one padded video streamed through undici, against curl on the same URL
// Prints human lines, then one JSON line per figure; the last line is the download figure.
// The simulator runs in a child process (as it does beside a real worker), so the client measured
// here and curl compete with it for the CPU the same way.
// Usage: npx tsx bench/sim.ts [--checks N] [--size BYTES]
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';
import { startSimulator, type SimStatsExt } from '../sim/index';

const KEY = 'sk-sim-bench';
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : fallback;
};
const CHECKS = Math.min(arg('--checks', 20_000), 1_000_000);
const SIZE = Math.min(arg('--size', 1024 ** 3), 8 * 1024 ** 3);
const CONCURRENCY = 32;
const TARGET_CHECKS = 2000;
const TARGET_DOWNLOAD_RATIO = 0.9;

function line(figure: string, value: number, unit: string, baseline: number | null, target: number, meets: boolean, note?: string): string {
  const ratio = baseline ? Number((value / baseline).toFixed(3)) : Number((value / target).toFixed(3));
  return JSON.stringify({ figure, value: Number(value.toFixed(1)), unit, baseline, ratio, target, meets, ...(note ? { note } : {}) });
}

/** Child mode: run the simulator and print its address; exit when the parent closes stdin. */
async function serve(): Promise<void> {
  const sim = await startSimulator({ keys: [KEY], renderMs: 0, videoBytes: SIZE, distinctVideos: false });
  console.log(`URL ${sim.urls[0] as string}`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

async function startChild(): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, [...process.execArgv, __filename, '--serve', '--size', String(SIZE)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const rl = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const base = await new Promise<string>((resolve, reject) => {
    rl.on('line', (l) => {
      if (l.startsWith('URL ')) resolve(l.slice(4));
    });
    child.on('exit', (c) => reject(new Error(`simulator exited with ${String(c)}`)));
  });
  return { child, base };
}

async function main(): Promise<void> {
  const { child, base } = await startChild();
  const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 30_000, pipelining: 1 });
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  try {
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const r = await request(`${base}/v1/video/generations`, {
        method: 'POST',
        headers,
        dispatcher: agent,
        body: JSON.stringify({ model: 'doubao-seedance-2-0-260128', prompt: `bench ${i}`, seconds: '4', metadata: { resolution: '480p' } }),
      });
      ids.push(((await r.body.json()) as { id: string }).id);
    }
    // Warm-up, then the measured run.
    const run = async (count: number): Promise<number> => {
      let next = 0;
      let failures = 0;
      const t0 = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < count) {
            const id = ids[next++ % ids.length] as string;
            const r = await request(`${base}/v1/video/generations/${id}`, { headers, dispatcher: agent });
            await r.body.text();
            if (r.statusCode !== 200) failures++;
          }
        }),
      );
      if (failures > 0) throw new Error(`${failures} status checks failed`);
      return Number(process.hrtime.bigint() - t0) / 1e9;
    };
    await run(Math.min(2000, CHECKS));
    const secs = await run(CHECKS);
    const perSec = CHECKS / secs;
    console.log(`status checks: ${CHECKS} in ${secs.toFixed(2)} s = ${perSec.toFixed(0)}/s (${CONCURRENCY} keep-alive connections)`);

    const url = `${base}/v1/videos/${ids[0] as string}/content`;
    const viaUndici = async (): Promise<number> => {
      const t1 = process.hrtime.bigint();
      const r = await request(url, { headers, dispatcher: agent, highWaterMark: 1024 * 1024 });
      let n = 0;
      await new Promise<void>((resolve, reject) => {
        r.body.on('data', (chunk: Buffer) => (n += chunk.length));
        r.body.on('end', resolve);
        r.body.on('error', reject);
      });
      if (n !== SIZE) throw new Error(`downloaded ${n} of ${SIZE} bytes`);
      return SIZE / 1024 / 1024 / (Number(process.hrtime.bigint() - t1) / 1e9);
    };
    // Asynchronous: the simulator must keep serving while curl runs.
    // curl reads the key from stdin (-H @-) so it never shows in the process list.
    const viaCurl = (): Promise<number> =>
      new Promise<string>((resolve, reject) => {
        const c = execFile(
          'curl',
          ['-s', '-o', '/dev/null', '-H', '@-', '-w', '%{speed_download}', url],
          { timeout: 120_000 },
          (err, stdout) => (err ? reject(err) : resolve(stdout)),
        );
        c.stdin?.end(`Authorization: Bearer ${KEY}\n`);
      }).then((speed) => Number(speed) / 1024 / 1024);
    // Best of two, interleaved: the machine is shared, so single runs are noisy.
    let mbps = 0;
    let curlMbps: number | null = 0;
    for (let round = 0; round < 2; round++) {
      mbps = Math.max(mbps, await viaUndici());
      try {
        if (curlMbps !== null) curlMbps = Math.max(curlMbps, await viaCurl());
      } catch {
        curlMbps = null;
      }
    }
    console.log(`download (undici): ${(SIZE / 1024 ** 2).toFixed(0)} MiB video, best of 2 = ${mbps.toFixed(0)} MiB/s`);
    console.log(
      curlMbps === null
        ? 'download (curl): curl not available, no baseline'
        : `download (curl, same URL): best of 2 = ${curlMbps.toFixed(0)} MiB/s`,
    );
    const stats = (await (
      await request(`${base}/__sim/stats`, { dispatcher: agent, headers: { authorization: `Bearer ${KEY}` } })
    ).body.json()) as SimStatsExt;
    console.log(`simulator served ${(stats.bytesServed / 1024 ** 2).toFixed(0)} MiB, ${stats.tasksCreated} tasks`);
    console.log(line('sim status checks per second', perSec, 'checks/s', null, TARGET_CHECKS, perSec >= TARGET_CHECKS));
    const ratio = curlMbps ? mbps / curlMbps : 0;
    console.log(
      line(
        'sim download throughput',
        mbps,
        'MiB/s',
        curlMbps === null ? null : Number(curlMbps.toFixed(1)),
        TARGET_DOWNLOAD_RATIO,
        curlMbps !== null && ratio >= TARGET_DOWNLOAD_RATIO,
        'value: a Node (undici) client; baseline: curl on the same URL, i.e. the rate the simulator itself can serve',
      ),
    );
  } finally {
    await agent.close();
    child.stdin?.end();
  }
}

(process.argv.includes('--serve') ? serve() : main()).catch((e: unknown) => {
  console.error(`bench failed: ${(e as Error).message}`);
  process.exit(1);
});
