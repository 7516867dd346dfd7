// Benchmark: planning a 10,000-item job whose output is in S3 (MinIO on loopback, behind a proxy that
// counts requests), run again after every item succeeded: each page of the plan (readPlanItems, 100
// items, as the job workflow asks for them) reads the manifest from the page before's cursor and
// stats each stored video. A job that ended left its manifest.jsonl snapshot. Baseline: the same
// planning by another tree (`--baseline-tree DIR`, e.g. a worktree of the commit before), the two
// alternating in the same run, each planning in a fresh process. Reports the median wall time per
// planning, S3 requests and peak RSS; the ratio is this tree's time over the baseline's.
// Last line: {"figure","value","unit","baseline","ratio","target","meets"}.
//
//   flock /tmp/reelflow-bench.lock node --import tsx bench/plan-s3.ts --baseline-tree /tmp/base [--items 10000] [--rounds 3]
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { parseArgs, promisify } from 'node:util';
import { preparePlan, readPlanItems, type PageItem } from '../activities/plan';
import { openStorage } from '../storage/index';
import type { ManifestRow } from '../storage/manifest/row';
import { mapLimit } from '../storage/objects/map-limit';
import { startS3Server, startS3TrafficRecorder } from '../test/support/s3-server';
import { emit, machineLine, median, say } from './lib/report';

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
    'baseline-tree': { type: 'string' },
    child: { type: 'string' },
    job: { type: 'string' },
  },
});
const ITEMS = Math.min(100_000, Number(values.items));
const ROUNDS = Math.min(20, Math.max(1, Number(values.rounds)));
const PAGE = 100;
const RUN_DATE = '2026-03-01';
const BUCKET = 'renders';
/** Re-planning a finished 10,000-item job should not hold its run up noticeably. */
const TARGET_MS = 60_000;

interface Planned {
  ms: number;
  todo: number;
  pages: number;
  peakRssMiB: number;
}

/** One planning of the whole job by the tree at `tree` (this process is the child). */
async function planAll(tree: string, jobFile: string): Promise<Planned> {
  const plan = (await import(join(tree, 'activities', 'plan.ts'))) as {
    preparePlan: typeof preparePlan;
    readPlanItems: typeof readPlanItems;
  };
  const start = performance.now();
  const prepared = await plan.preparePlan({ jobFile, runDate: RUN_DATE, startedAt: Date.now() });
  let offset = 0;
  let todo = 0;
  let pages = 0;
  for (;;) {
    const page = await plan.readPlanItems({
      jobFile,
      runDate: RUN_DATE,
      digest: prepared.digest,
      offset,
      limit: PAGE,
      retryStates: [],
      output: prepared.settings.output,
    });
    pages += 1;
    todo += page.items.length;
    if (page.nextOffset === offset) break;
    offset = page.nextOffset;
  }
  const ms = performance.now() - start;
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return { ms, todo, pages, peakRssMiB: Number(hwm?.[1] ?? 0) / 1024 };
}

function jobText(endpoint: string, region: string): string {
  const lines = [
    'name: plan-s3',
    'gateway:',
    '  base_urls: [http://127.0.0.1:8787]',
    'defaults:',
    '  model: seedance-1-0-pro-250528',
    'items:',
  ];
  for (let i = 0; i < ITEMS; i++) lines.push(`  - id: shot-${i}`, `    prompt: Shot ${i} of the trail runner shoe, camera move ${i % 13}`);
  lines.push('output:', '  storage: s3', '  s3:', `    bucket: ${BUCKET}`, '    prefix: "{job}/"', `    region: ${region}`);
  lines.push(`    endpoint: ${endpoint}`, '    force_path_style: true');
  return `${lines.join('\n')}\n`;
}

/** The job's every item stored and its succeeded row appended, as a finished run leaves them; then its snapshot. */
async function seed(jobFile: string, endpoint: string): Promise<void> {
  const prepared = await preparePlan({ jobFile, runDate: RUN_DATE, startedAt: Date.now() });
  const items: PageItem[] = [];
  for (let offset = 0; ;) {
    const page = await readPlanItems({
      jobFile,
      runDate: RUN_DATE,
      digest: prepared.digest,
      offset,
      limit: PAGE,
      retryStates: [],
      output: prepared.settings.output,
    });
    items.push(...page.items);
    if (page.nextOffset === offset) break;
    offset = page.nextOffset;
  }
  // Straight to the server: the counting proxy is for the plannings, and many writes at once through it are reset.
  const { output } = prepared.settings;
  const storage = openStorage({ ...output, s3: { ...output.s3!, endpoint } });
  await mapLimit(items, 16, async (item) => {
    const file = `${item.outputName}.mp4`;
    // overwrite: nothing is there yet, and the stat that looks for a foreign file only slows the seeding.
    const written = await storage.write(file, Readable.from([Buffer.from(`video of ${item.key}`)]), { overwrite: true });
    const row: ManifestRow = {
      key: item.key,
      id: item.id ?? null,
      index: item.index,
      state: 'succeeded',
      model: item.request.model,
      protocol: item.request.protocol,
      prompt: item.request.prompt,
      ...(item.requestDigest ? { request_digest: item.requestDigest } : {}),
      task_id: `task-${item.index}`,
      base_url: 'http://127.0.0.1:8787',
      created_at: new Date().toISOString(),
      finished_at: new Date().toISOString(),
      polls: 1,
      file,
      bytes: written.bytes,
      sha256: written.sha256,
      error: null,
    };
    await storage.appendManifest(row);
  });
  await storage.snapshotManifest();
}

async function main(): Promise<void> {
  if (values.child) {
    process.stdout.write(`${JSON.stringify(await planAll(resolve(values.child), values.job!))}\n`);
    return;
  }
  const baselineTree = values['baseline-tree'] ? resolve(values['baseline-tree']) : undefined;
  const thisTree = resolve(__dirname, '..');
  say(machineLine());
  const server = await startS3Server();
  const recorder = await startS3TrafficRecorder(server.endpoint);
  const dir = mkdtempSync(join(tmpdir(), 'reelflow-bench-plan-s3-'));
  Object.assign(process.env, server.env);
  try {
    await server.createBucket(BUCKET);
    const jobFile = join(dir, 'job.yaml');
    writeFileSync(jobFile, jobText(recorder.endpoint, server.region));
    const seedStart = performance.now();
    await seed(jobFile, server.endpoint);
    say(`seeded ${ITEMS} stored videos and rows in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);
    const trees = baselineTree ? { after: thisTree, before: baselineTree } : { after: thisTree };
    const runs: Record<string, (Planned & { requests: number })[]> = { after: [], before: [] };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating who goes first, so neither always meets a warmer server.
      const order = Object.entries(trees);
      if (round % 2 === 1) order.reverse();
      for (const [which, tree] of order) {
        const before = recorder.requests.length;
        // Not execFileSync: the counting proxy runs in this process's event loop.
        const { stdout: out } = await promisify(execFile)(
          process.execPath,
          ['--import', 'tsx', __filename, '--child', tree, '--job', jobFile],
          {
            env: process.env,
            encoding: 'utf8',
            maxBuffer: 1 << 20,
          },
        );
        const planned = JSON.parse(out.trim().split('\n').at(-1)!) as Planned;
        if (planned.todo !== 0) throw new Error(`${which}: ${planned.todo} items to render, expected none (every item succeeded)`);
        const got = { ...planned, requests: recorder.requests.length - before };
        runs[which]!.push(got);
        say(
          `round ${round + 1} ${which}: ${(got.ms / 1000).toFixed(2)} s, ${got.pages} pages, ${got.requests} S3 requests, peak RSS ${got.peakRssMiB.toFixed(1)} MiB`,
        );
      }
    }
    const ms = (which: string) => median(runs[which]!.map((r) => r.ms));
    const after = ms('after');
    const before = baselineTree ? ms('before') : null;
    say(`median planning: ${(after / 1000).toFixed(2)} s${before !== null ? `, baseline ${(before / 1000).toFixed(2)} s` : ''}`);
    emit({
      figure: `planning a ${ITEMS}-item job again on S3 output, every item stored`,
      value: after,
      unit: 'ms',
      baseline: before,
      ratio: before !== null ? after / before : null,
      target: `under ${TARGET_MS} ms`,
      meets: after < TARGET_MS,
      requests: median(runs.after!.map((r) => r.requests)),
      baseline_requests: before !== null ? median(runs.before!.map((r) => r.requests)) : null,
      peak_rss_mib: median(runs.after!.map((r) => r.peakRssMiB)),
      baseline_peak_rss_mib: before !== null ? median(runs.before!.map((r) => r.peakRssMiB)) : null,
    });
  } finally {
    await recorder.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
