// Assembling a film (media/assemble.ts): N clips of S seconds at 1280x720 24 fps with sound, cut
// by stream copy (the clips agree), re-encoded (the last clip at another size), and with a 0.5 s
// crossfade. Prints each one's wall time and its ratio to the film's length: stream copy should
// cost a small fraction of real time whatever the length, a re-encode about what the encoder takes.
//
//   flock /tmp/reelflow-bench.lock npm run bench -- assemble [--clips 4] [--seconds 8]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { assembleClips } from '../media/assemble';
import { makeClip } from '../test/support/clips';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { clips: { type: 'string', default: '4' }, seconds: { type: 'string', default: '8' } } });
  const n = Number(values.clips);
  const seconds = Number(values.seconds);
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-bench-assemble-'));
  try {
    const same = Array.from({ length: n }, (_, i) => makeClip(join(dir, `c${i}.mp4`), { seconds, size: '1280x720', tone: 300 + 50 * i }));
    const odd = makeClip(join(dir, 'odd.mp4'), { seconds, size: '960x540', tone: 900 });
    const cases: Array<[string, string[], number]> = [
      ['stream copy', same, 0],
      ['re-encode', [...same.slice(0, -1), odd], 0],
      ['crossfade 0.5 s', same, 0.5],
    ];
    console.log(`${n} clips of ${seconds} s, 1280x720 24 fps, AAC sound`);
    for (const [label, clips, crossfadeSec] of cases) {
      const started = process.hrtime.bigint();
      const film = await assembleClips(clips, join(dir, `${label.replace(/\W+/g, '-')}.mp4`), {
        crossfadeSec,
        timeoutMs: 30 * 60_000,
        maxBytes: 4 * 2 ** 30,
      });
      const wall = Number(process.hrtime.bigint() - started) / 1e9;
      console.log(
        `${label.padEnd(16)} ${film.method.padEnd(12)} film ${film.durationSec.toFixed(2)} s  wall ${wall.toFixed(2)} s  ` +
          `${((wall / film.durationSec) * 100).toFixed(1)} % of real time`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
