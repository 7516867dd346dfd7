// Storage throughput: a generated video stream (1 GiB by default, produced on the fly in 64 KiB
// chunks like a network body) written through LocalStorage (baseline: .part, hash, fsync, rename)
// and through S3Storage to a real local S3 server (MinIO, see scripts/s3-server.sh) on the same disk.
// Prints MB/s and RSS growth of this process for each; the last line is one JSON object.
//
//   node --import tsx bench/storage.ts [--mib 1024] [--rounds 2]
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { LocalStorage, S3Storage, type Storage } from '../storage/index';
import { startS3Server } from '../test/support/s3-server';

const { values } = parseArgs({
  options: { mib: { type: 'string', default: '1024' }, rounds: { type: 'string', default: '2' } },
});
const TOTAL = Number(values.mib) * 1024 * 1024;
const ROUNDS = Math.max(1, Number(values.rounds));
const CHUNK = 64 * 1024;
const TARGET = 0.8;

/** `bytes` of pseudo-video, fresh buffers like a network body delivers, never held in memory. */
function generated(bytes: number): Readable {
  const pool = randomBytes(8 * 1024 * 1024);
  let sent = 0;
  return new Readable({
    highWaterMark: 1024 * 1024,
    read() {
      if (sent >= bytes) {
        this.push(null);
        return;
      }
      const n = Math.min(CHUNK, bytes - sent);
      const at = (sent * 7) % (pool.length - n);
      const chunk = Buffer.allocUnsafe(n);
      pool.copy(chunk, 0, at, at + n);
      chunk.writeUInt32LE(sent >>> 0, 0);
      sent += n;
      this.push(chunk);
    },
  });
}

interface Run {
  mbps: number;
  seconds: number;
  rssGrowthMB: number;
}

async function measure(storage: Storage, name: string): Promise<Run> {
  global.gc?.();
  const rss0 = process.memoryUsage.rss();
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 50);
  const t0 = process.hrtime.bigint();
  const result = await storage.write(name, generated(TOTAL), { expectedBytes: TOTAL });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage.rss());
  if (result.bytes !== TOTAL) throw new Error(`wrote ${result.bytes} bytes, expected ${TOTAL}`);
  return { mbps: TOTAL / 1e6 / seconds, seconds, rssGrowthMB: (peak - rss0) / 1e6 };
}

const fmt = (r: Run) => `${r.mbps.toFixed(1)} MB/s (${r.seconds.toFixed(2)} s, RSS +${r.rssGrowthMB.toFixed(1)} MB)`;
const best = (runs: Run[]) => runs.reduce((a, b) => (b.mbps > a.mbps ? b : a));

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-bench-storage-'));
  const server = await startS3Server();
  try {
    await server.createBucket('bench');
    const local = new LocalStorage(join(dir, 'out'));
    const s3 = new S3Storage(
      { bucket: 'bench', prefix: 'bench/', region: server.region, endpoint: server.endpoint, forcePathStyle: true },
      { credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } },
    );
    await local.checkWritable();
    await s3.checkWritable();
    process.stderr.write(`storage bench: ${(TOTAL / 1024 ** 2).toFixed(0)} MiB per write, ${ROUNDS} round(s), S3 server ${server.endpoint}\n`);
    const localRuns: Run[] = [];
    const s3Runs: Run[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const l = await measure(local, 'video.mp4');
      await rm(local.localPath('video.mp4'), { force: true });
      localRuns.push(l);
      console.log(`round ${round} local disk: ${fmt(l)}`);
      const s = await measure(s3, 'video.mp4');
      s3Runs.push(s);
      console.log(`round ${round} S3 (MinIO, loopback): ${fmt(s)}`);
    }
    const baseline = best(localRuns);
    const value = best(s3Runs);
    const ratio = value.mbps / baseline.mbps;
    const rssMax = Math.max(...localRuns.map((r) => r.rssGrowthMB), ...s3Runs.map((r) => r.rssGrowthMB));
    console.log(`best local ${fmt(baseline)}; best S3 ${fmt(value)}; ratio ${ratio.toFixed(2)} (target >= ${TARGET}); max RSS growth ${rssMax.toFixed(1)} MB`);
    console.log(
      JSON.stringify({
        figure: 's3_upload_throughput_vs_local_disk',
        value: Number(value.mbps.toFixed(1)),
        unit: 'MB/s',
        baseline: Number(baseline.mbps.toFixed(1)),
        ratio: Number(ratio.toFixed(3)),
        target: TARGET,
        meets: ratio >= TARGET,
      }),
    );
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
