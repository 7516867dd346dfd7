// Chains of shots (docs/chains.md): how close the job runs a chain to its ideal. A chain's shots
// cannot overlap (each starts from the last frame of the one before), so its ideal is the sum of
// its renders; chains side by side are as long as the longest one.
//   npx tsx bench/chains.ts [--shots 20] [--render-ms 10000] [--chains 10] [--chain-shots 5] [--profile new-api]
// 1. one chain of `shots` shots: makespan (start to last file) against shots x render time;
// 2. `chains` chains of `chain-shots` shots side by side: makespan against chain-shots x render time.
// Target: within 5 % of each. The simulator's default profile returns no last frame, so every frame
// is taken from the stored video (ffmpeg), as with a gateway that returns none; `--profile new-api`
// returns each shot's last frame (fetched and stored at once), with the simulator's task refresher
// at 100 ms so that the figure is reelflow's hand-over, not new-api's 15 s refresh rounds.
import { parseArgs } from 'node:util';
import { emit, fail, intFlags, machineLine, say, seconds } from './lib/report';
import { isProfile, type SimProfile } from '../sim/index';
import { runJob, startStack, type Stack } from './lib/stack';
import type { JobSpec } from '../test/support/jobs';

const TARGET = 1.05;

function chain(name: string, shots: number): JobSpec['items'] {
  return Array.from({ length: shots }, (_, i) => ({
    id: `${name}-${i + 1}`,
    prompt: `${name} shot ${i + 1}`,
    ...(i > 0 ? { lines: ['references:', `  - image: { last_frame_of: ${name}-${i} }`] } : {}),
  }));
}

async function makespan(stack: Stack, name: string, items: JobSpec['items'], renderMs: number): Promise<number> {
  const run = await runJob(stack, {
    name,
    items,
    maxInFlight: 100,
    // A user who knows the model's render time asks first when it should be done.
    polling: `polling:\n  initial: ${renderMs}ms\n  max: ${Math.max(2_000, renderMs)}ms\n  timeout: 10m`,
  });
  const succeeded = run.rows.filter((r) => r.state === 'succeeded').length;
  if (succeeded !== items.length) throw new Error(`${name}: ${succeeded} of ${items.length} shots succeeded`);
  // Where a chain's time goes: each shot's create to its file, and a shot's file to the next shot's create.
  const byKey = new Map(run.rows.map((r) => [r.key, r]));
  const renders: number[] = [];
  const handovers: number[] = [];
  for (const item of items) {
    const row = byKey.get(item.id!)!;
    renders.push(Date.parse(row.finished_at) - Date.parse(row.created_at!));
    const before = /last_frame_of: (\S+) \}/.exec(item.lines?.join('\n') ?? '')?.[1];
    if (before) handovers.push(Date.parse(row.created_at!) - Date.parse(byKey.get(before)!.finished_at));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const firstCreate = Math.min(...run.rows.map((r) => Date.parse(r.created_at!)));
  say(
    `${name}: first create ${seconds(firstCreate - run.startedAt)} after start; create to file: median ${seconds(median(renders))}; ` +
      `a shot's file to the next shot's create: median ${seconds(median(handovers))}, max ${seconds(Math.max(...handovers))}`,
  );
  return run.lastFileAt - run.startedAt;
}

function profileFlag(): SimProfile {
  const { values } = parseArgs({ options: { profile: { type: 'string' } }, strict: false, allowPositionals: true });
  const profile = values.profile ?? 'default';
  if (typeof profile !== 'string' || !isProfile(profile))
    throw new Error(`--profile must be default, litellm, new-api or new-api-0.10, got ${String(profile)}`);
  return profile;
}

async function main(): Promise<void> {
  const o = intFlags({ shots: 20, 'render-ms': 10_000, chains: 10, 'chain-shots': 5 });
  const profile = profileFlag();
  const renderMs = o['render-ms'];
  say(
    `chains: one chain of ${o.shots} shots, then ${o.chains} chains of ${o['chain-shots']} side by side; ${renderMs} ms renders; simulator profile ${profile}; ${machineLine()}`,
  );
  const stack = await startStack({ ports: [0], renderMs, seed: 34, profile, ...(profile === 'default' ? {} : { refreshMs: 100 }) });
  try {
    const one = await makespan(stack, 'bench-chain', chain('shot', o.shots), renderMs);
    const oneIdeal = o.shots * renderMs;
    say(
      `one chain: makespan ${seconds(one)}; ideal ${o.shots} x ${seconds(renderMs)} = ${seconds(oneIdeal)}; ratio ${(one / oneIdeal).toFixed(3)}`,
    );
    const many = Array.from({ length: o.chains }, (_, c) => chain(`c${c + 1}`, o['chain-shots'])).flat();
    const side = await makespan(stack, 'bench-chains', many, renderMs);
    const sideIdeal = o['chain-shots'] * renderMs;
    say(
      `${o.chains} chains side by side: makespan ${seconds(side)}; ideal (the longest chain) ${seconds(sideIdeal)}; ratio ${(side / sideIdeal).toFixed(3)}`,
    );
    emit({
      figure: `makespan of a ${o.shots}-shot chain of ${seconds(renderMs)} renders (simulator profile ${profile})`,
      value: one,
      unit: 'ms',
      baseline: oneIdeal,
      ratio: one / oneIdeal,
      target: `<= ${TARGET} x the sum of the renders; ${o.chains} chains side by side <= ${TARGET} x the longest`,
      meets: one / oneIdeal <= TARGET && side / sideIdeal <= TARGET,
      side_by_side_ms: side,
      side_by_side_ratio: side / sideIdeal,
    });
  } finally {
    await stack.stop();
  }
}

main().catch((error: unknown) => {
  const cause = (error as { cause?: { message?: string; cause?: { message?: string } } }).cause;
  if (cause) say(`cause: ${cause.message ?? ''} ${cause.cause?.message ?? ''}`);
  fail(error);
});
