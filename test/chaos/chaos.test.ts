// Resilience ("chaos"): one job while faults are injected in a seeded random order: gateway 5xx and
// 429 bursts, connection resets, cut downloads, lost create responses, the primary base address
// dying and coming back, the worker killed with SIGKILL, the Temporal server restarted. Then every
// item must have ended the way the simulator's own record says it should, nothing may have been
// created twice, every file must match its manifest line and the bytes served, and the key must
// appear nowhere (logs, files, workflow histories).
//   REELFLOW_CHAOS_FULL=1 -> 200 items (npm run test:chaos); else 40 items (< 4 minutes, in npm test)
//   REELFLOW_CHAOS_SEED=N -> replay a run (the seed is printed first)
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { request } from 'undici';
import { startSimulator, type SimHandleExt, type SimStatsExt } from '../../sim';
import type { ManifestRow } from '../../storage/manifest/row';
import { ensureDevServer, type DevServer } from '../../worker/dev-server';
import { connectClient } from '../../worker/temporal';
import { jobWorkflowId } from '../../workflows/ids';
import { runCli } from '../support/cli';
import { tempDir } from '../support/jobs';
import { sha256File } from '../support/media';
import { startTestTemporal, type TestTemporal } from '../support/temporal';
import { filesContaining, historiesContaining, prng, shuffle, sleep, startWorker, stopWorker, until, type WorkerProcess } from './support';

const FULL = process.env.REELFLOW_CHAOS_FULL === '1';
const SEED = Number(process.env.REELFLOW_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const ITEMS = FULL ? 200 : 40;
const MAX_IN_FLIGHT = FULL ? 12 : 5;
const KEY = `sk-chaos-${SEED.toString(36)}-9f8e7d6c5b4a`;
const JOB = 'chaos';

interface Chaos {
  name: string;
  /** Injects the fault; resolves once it has been reverted (or recovered from). */
  run(): Promise<void>;
}

describe(`chaos (seed ${SEED}, ${ITEMS} items${FULL ? ', full' : ', trimmed'})`, () => {
  let temporal: TestTemporal;
  let restarted: DevServer | undefined;
  let sim: SimHandleExt;
  let client: Client;
  let env: NodeJS.ProcessEnv;
  let worker: WorkerProcess | undefined;
  const dir = tempDir('reelflow-chaos-', { keep: true });
  const workerLog = join(dir, 'worker-output.log');
  /** The work directory is kept when the run fails, for its manifest, files and worker output. */
  let passed = false;

  before(async () => {
    process.stderr.write(`chaos: seed ${SEED} (replay with REELFLOW_CHAOS_SEED=${SEED}), ${ITEMS} items, work dir ${dir}\n`);
    // startTestTemporal picks its two ports separately; with other suites running, one can be taken in between.
    for (let attempt = 1; ; attempt++) {
      try {
        temporal = await startTestTemporal();
        break;
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
    sim = await startSimulator({
      ports: [0, 0],
      keys: [KEY],
      renderMs: [1500, 4500],
      videoBytes: 256 * 1024,
      seed: SEED,
      // Durability is checked here, not the picture: one shared video per size keeps ffmpeg (one
      // render at a time) from pacing 40 to 200 downloads (docs/simulator.md).
      distinctVideos: false,
      // Always on: some renders fail with a reason; new tasks are briefly unknown to status checks.
      faults: { failRate: 0.1, notExistWindowMs: 1500 },
    });
    env = { ...temporal.env, GATEWAY_API_KEY: KEY };
    const target = {
      address: temporal.address,
      namespace: 'default',
      connectionOptions: { address: temporal.address },
      description: 'chaos',
    };
    client = await connectClient(target);
    worker = await startWorker(env, workerLog);
  });

  after(async () => {
    if (worker) await stopWorker(worker);
    await client?.connection.close().catch(() => undefined);
    await sim?.close();
    // test/support/temporal's stop() knows only the first server process: stop the restarted one here.
    await restarted?.stop();
    await temporal?.stop();
    if (passed) rmSync(dir, { recursive: true, force: true });
    else process.stderr.write(`chaos: work directory kept: ${dir}\n`);
  });

  it(
    'ends every item as the simulator decided, creates nothing twice, keeps files intact and the key secret',
    { timeout: FULL ? 25 * 60_000 : 4 * 60_000 },
    async () => {
      const random = prng(SEED);
      const port = Number(temporal.address.split(':').at(-1));
      const faultCount = (prefix: string) =>
        Object.entries(sim.stats().faults)
          .filter(([k]) => k.startsWith(prefix))
          .reduce((a, [, n]) => a + n, 0);
      /** Turns a fault on until the simulator has produced `least` of it (at most 12 s), then off. */
      const burst =
        (
          faults: Parameters<SimHandleExt['setFaults']>[0],
          reset: Parameters<SimHandleExt['setFaults']>[0],
          prefixes: string[],
          least: number,
        ) =>
        async () => {
          const count = () => prefixes.reduce((a, p) => a + faultCount(p), 0);
          const before = count();
          const end = Date.now() + 12_000;
          sim.setFaults(faults);
          await sleep(1000 + random() * 1000);
          while (count() - before < least && Date.now() < end) await sleep(100);
          sim.setFaults(reset);
        };
      const kinds: Chaos[] = [
        // 5xx and resets on status checks and downloads; creates get their own faults below, because
        // on a create they are ambiguous by design (the item would rightly end `unknown`).
        {
          name: 'gateway 5xx burst',
          run: burst({ errorRate: 0.4, scope: ['retrieve', 'content'] }, { errorRate: 0, scope: undefined }, ['5'], 5),
        },
        { name: 'gateway 429 burst (all calls)', run: burst({ rateLimitRate: 0.4 }, { rateLimitRate: 0 }, ['429'], 5) },
        {
          name: 'connection resets',
          run: burst({ resetRate: 0.3, scope: ['retrieve', 'content'] }, { resetRate: 0, scope: undefined }, ['reset'], 4),
        },
        { name: 'cut downloads', run: burst({ cutDownloadRate: 0.7 }, { cutDownloadRate: 0 }, ['cut-download'], 2) },
        { name: 'lost create responses', run: burst({ lostCreateRate: 0.5 }, { lostCreateRate: 0 }, ['lost-create'], 1) },
        {
          name: 'primary base address dies and comes back',
          run: async () => {
            await sim.setPortMode(0, 'refuse');
            await sleep(3000 + random() * 3000);
            await sim.setPortMode(0, 'up');
          },
        },
        {
          name: 'worker kill -9',
          run: async () => {
            worker!.child.kill('SIGKILL');
            await worker!.exited;
            await sleep(500 + random() * 1500);
            worker = await startWorker(env, workerLog);
          },
        },
        {
          name: 'Temporal server restart',
          run: async () => {
            await (restarted ?? temporal.server).stop();
            await sleep(500 + random() * 1000);
            for (let attempt = 1; ; attempt++) {
              try {
                restarted = await ensureDevServer({ stateDir: temporal.stateDir, foreground: true, port, startTimeoutMs: 90_000 });
                break;
              } catch (error) {
                if (attempt >= 5) throw error;
                await sleep(1000);
              }
            }
          },
        },
      ];
      const schedule = shuffle(FULL ? [...kinds, ...kinds] : kinds, random);
      // Each fault fires once this share of the items has been created (spread over the first 60 %).
      const thresholds = schedule.map((_, i) => Math.max(1, Math.floor(ITEMS * (0.05 + (0.55 * i) / schedule.length))));

      const jobFile = join(dir, `${JOB}.yaml`);
      writeFileSync(
        jobFile,
        [
          'version: 1',
          `name: ${JOB}`,
          'gateway:',
          '  base_urls:',
          ...sim.urls.map((u) => `    - ${u}`),
          '  request_timeout: 10s',
          'defaults:',
          '  model: seedance-1-0-pro-250528',
          '  seconds: "5"',
          `concurrency:\n  max_in_flight: ${MAX_IN_FLIGHT}`,
          'polling:\n  initial: 500ms\n  max: 2s\n  timeout: 5m',
          'retries:\n  create: safe\n  download: 10',
          'output:\n  dir: ./out',
          'items:',
          ...Array.from({ length: ITEMS }, (_, i) => `  - id: item-${i + 1}\n    prompt: "chaos prompt ${i + 1}"`),
          '',
        ].join('\n'),
      );

      const started = await runCli(['run', jobFile, '--no-worker', '--detach'], { env });
      assert.equal(started.code, 0, started.stderr);

      const injected: Array<{ name: string; atCreates: number; ms: number }> = [];
      const jobDone = async () => {
        try {
          const d = await client.workflow.getHandle(jobWorkflowId(JOB)).describe();
          return d.status.name !== 'RUNNING';
        } catch {
          return false; // the server is restarting
        }
      };
      for (const [i, chaos] of schedule.entries()) {
        await until(async () => sim.stats().tasksCreated >= thresholds[i]! || (await jobDone()), 5 * 60_000, `${thresholds[i]} creates`);
        if (await jobDone()) break;
        const t = Date.now();
        const atCreates = sim.stats().tasksCreated;
        await chaos.run();
        injected.push({ name: chaos.name, atCreates, ms: Date.now() - t });
        process.stderr.write(`chaos: ${chaos.name} at ${atCreates} creates (${Date.now() - t} ms)\n`);
      }
      await until(jobDone, FULL ? 20 * 60_000 : 3 * 60_000, 'the job to finish');
      const stats: SimStatsExt = sim.stats();
      if (worker) await stopWorker(worker);
      worker = undefined;

      // --- What the simulator did, asked of the simulator itself (faults off, all ports up).
      sim.setFaults({ errorRate: 0, rateLimitRate: 0, resetRate: 0, cutDownloadRate: 0, lostCreateRate: 0, notExistWindowMs: 0 });
      const headers = { authorization: `Bearer ${KEY}` };
      const simTask = async (id: string) => {
        const r = await request(`${sim.urls[1]!}/v1/video/generations/${id}`, { headers });
        return ((await r.body.json()) as { data: { status: string; fail_reason: string } }).data;
      };
      const servedSha = async (id: string) => {
        const r = await request(`${sim.urls[1]!}/v1/videos/${id}/content`, { headers });
        const hash = createHash('sha256');
        for await (const chunk of r.body) hash.update(chunk as Buffer);
        return hash.digest('hex');
      };

      const out = join(dir, 'out');
      const lines = readFileSync(join(out, 'manifest.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.trim());
      const latest = new Map<string, ManifestRow>();
      for (const l of lines) latest.set((JSON.parse(l) as ManifestRow).key, JSON.parse(l) as ManifestRow);
      const problems: string[] = [];
      const states: Record<string, number> = {};
      let hashesChecked = 0;
      for (const row of latest.values()) {
        states[row.state] = (states[row.state] ?? 0) + 1;
        const creates = stats.createsByPrompt[row.prompt] ?? 0;
        if (creates > 1) problems.push(`${row.key}: created ${creates} times (retries.create: safe)`);
        if (!row.task_id) {
          // The create never returned a task: the gateway may or may not have started it.
          if (row.state !== 'unknown')
            problems.push(`${row.key}: no task id but ended ${row.state} (${row.error?.kind ?? ''}: ${row.error?.message ?? ''})`);
          continue;
        }
        const truth = await simTask(row.task_id);
        if (truth.status === 'FAILURE') {
          if (row.state !== 'failed' || row.error?.kind !== 'render_failed' || row.error.message !== truth.fail_reason) {
            problems.push(
              `${row.key}: the simulator failed its render ("${truth.fail_reason}") but it ended ${row.state} (${row.error?.kind ?? ''}: ${row.error?.message ?? ''})`,
            );
          }
        } else if (truth.status === 'SUCCESS') {
          if (row.state !== 'succeeded')
            problems.push(`${row.key}: rendered fine but ended ${row.state} (${row.error?.kind ?? ''}: ${row.error?.message ?? ''})`);
          else {
            const file = join(out, row.file!);
            if (!existsSync(file)) problems.push(`${row.key}: ${row.file} missing`);
            else {
              const onDisk = sha256File(file);
              if (onDisk !== row.sha256) problems.push(`${row.key}: file sha256 ${onDisk} != manifest ${row.sha256}`);
              if (onDisk !== (await servedSha(row.task_id))) problems.push(`${row.key}: file differs from the bytes the simulator serves`);
              hashesChecked++;
            }
          }
        } else problems.push(`${row.key}: the simulator says ${truth.status}`);
      }
      if (latest.size !== ITEMS) problems.push(`manifest has ${latest.size} keys for ${ITEMS} items`);
      // Unknown items, each explained by the simulator's own record (not by error text, because a
      // lost answer and a connection closed under a request in flight read the same to the client):
      // - its create was processed and its answer lost on purpose: it must end unknown;
      // - its create never reached the simulator: the request was cut in flight, by the primary dying
      //   (a keep-alive connection closed as the request went out) or by a worker kill;
      // - its create was processed and answered: only a worker kill or a server restart can lose that.
      const lostCreates = Object.values(stats.lostCreatesByPrompt).reduce((a, n) => a + n, 0);
      let unknownLost = 0;
      let unknownNeverArrived = 0;
      let unknownAnswered = 0;
      for (const row of latest.values()) {
        const lost = (stats.lostCreatesByPrompt[row.prompt] ?? 0) > 0;
        if (lost && (row.state !== 'unknown' || row.error?.kind !== 'ambiguous_create')) {
          problems.push(`${row.key}: its create's answer was lost but it ended ${row.state} (${row.error?.kind ?? ''})`);
        }
        if (row.state !== 'unknown') continue;
        if (!['ambiguous_create', 'activity_timeout'].includes(row.error?.kind ?? ''))
          problems.push(`${row.key}: unknown with ${row.error?.kind ?? 'no error'}`);
        if (lost) unknownLost++;
        else if ((stats.createsByPrompt[row.prompt] ?? 0) === 0) unknownNeverArrived++;
        else unknownAnswered++;
      }
      const restarts = injected.filter((c) => c.name === 'worker kill -9' || c.name === 'Temporal server restart').length;
      const cuts = restarts + injected.filter((c) => c.name === 'primary base address dies and comes back').length;
      if (unknownAnswered > restarts * MAX_IN_FLIGHT)
        problems.push(
          `${unknownAnswered} items unknown although their create was answered, after ${restarts} worker kill(s) or server restart(s)`,
        );
      if (unknownNeverArrived > cuts * MAX_IN_FLIGHT)
        problems.push(`${unknownNeverArrived} items unknown whose create never arrived, after ${cuts} interruption(s)`);

      const leaks = [
        ...filesContaining(join(temporal.stateDir, 'logs'), KEY),
        ...filesContaining(out, KEY),
        ...(readFileSync(workerLog, 'utf8').includes(KEY) ? [workerLog] : []),
        ...(readFileSync(join(dir, `${JOB}.yaml`), 'utf8').includes(KEY) ? ['the job file'] : []),
      ];
      // The prompt of an item must be found in the histories (payload bytes decoded): proof that the scan sees them.
      const histories = await historiesContaining(client, [KEY, 'chaos prompt 1"']);
      leaks.push(...histories.hits.get(KEY)!);
      if (histories.hits.get('chaos prompt 1"')!.length === 0)
        problems.push('the history scan did not find a known prompt: it cannot see payloads');
      if (leaks.length > 0) problems.push(`the key appears in: ${leaks.join(', ')}`);
      if (histories.scanned < ITEMS) problems.push(`only ${histories.scanned} workflow histories found to scan`);

      // --- The table: what was injected, how often, and whether the run survived it.
      const count = (prefix: string) =>
        Object.entries(stats.faults)
          .filter(([k]) => k.startsWith(prefix))
          .reduce((a, [, n]) => a + n, 0);
      const fired = (name: string) => injected.filter((c) => c.name === name).length;
      const ok = problems.length === 0 ? 'yes' : 'NO';
      const table: Array<[string, string, string]> = [
        ['gateway 5xx (status checks, downloads)', `${fired('gateway 5xx burst')} burst(s), ${count('5')} responses`, ok],
        ['gateway 429', `${fired('gateway 429 burst (all calls)')} burst(s), ${count('429')} responses`, ok],
        ['connection resets', `${fired('connection resets')} burst(s), ${count('reset')} resets`, ok],
        ['cut downloads', `${fired('cut downloads')} burst(s), ${count('cut')} cuts`, hashesChecked > 0 ? ok : 'n/a'],
        ['lost create responses', `${fired('lost create responses')} burst(s), ${lostCreates} lost -> ${unknownLost} unknown`, ok],
        ['task_not_exist right after create', `${count('task-not-exist')} responses`, ok],
        ['renders failed by the gateway', `${states['failed'] ?? 0} failed with the gateway's reason`, ok],
        ['primary base address down', `${fired('primary base address dies and comes back')} time(s)`, ok],
        ['worker kill -9', `${fired('worker kill -9')} time(s)`, ok],
        ['creates cut in flight -> unknown', `${unknownNeverArrived} never arrived, ${unknownAnswered} answered`, ok],
        ['Temporal server restart', `${fired('Temporal server restart')} time(s)`, ok],
      ];
      const width = Math.max(...table.map((r) => r[0].length));
      process.stderr.write(
        [
          `chaos seed ${SEED}: ${ITEMS} items -> ${JSON.stringify(states)}; ${lines.length} manifest lines; ${hashesChecked} files hashed (disk = manifest = served);`,
          `${histories.scanned} histories, ${stats.tasksCreated} tasks created, sim faults ${JSON.stringify(stats.faults)}`,
          `${'fault'.padEnd(width)}  ${'injected'.padEnd(44)}  survived`,
          ...table.map(([a, b, c]) => `${a.padEnd(width)}  ${b.padEnd(44)}  ${c}`),
          ...(injected.length < schedule.length
            ? [
                `not injected (the job finished first): ${schedule
                  .slice(injected.length)
                  .map((c) => c.name)
                  .join(', ')}`,
              ]
            : []),
          '',
        ].join('\n'),
      );
      assert.deepEqual(problems, [], `seed ${SEED}: ${problems.length} problem(s)`);
      assert.ok(
        injected.length >= Math.min(schedule.length, 6),
        `only ${injected.length} of ${schedule.length} faults were injected before the job finished`,
      );
      passed = true;
    },
  );
});
