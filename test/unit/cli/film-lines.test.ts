// describeFilms: `run`'s line for each film of the job's assemble: (docs/chains.md).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeFilms } from '../../../client/summary';

// eslint-disable-next-line no-control-regex -- colour sequences start with ESC
const plain = (lines: string[]) => lines.map((l) => l.replace(/\x1b\[[0-9;]*m/g, ''));

test('made, unchanged, not made and failed films each say what happened, and where', () => {
  const sha256 = 'a'.repeat(64);
  const lines = describeFilms(
    [
      { name: 'trio', state: 'made', file: 'trio.mp4', bytes: 10, sha256, durationSec: 15.02, method: 'stream_copy' },
      { name: 'duo', state: 'unchanged', file: 'duo.mp4', bytes: 10, sha256, durationSec: 9.5, method: 're_encode' },
      { name: 'late', state: 'not_made', clip: { key: 'shot-3', state: 'failed' }, reason: 'clip shot-3 ended failed' },
      {
        name: 'bad',
        state: 'failed',
        kind: 'assembly_refused',
        reason: 'film bad: a crossfade of 3 s is not shorter than the shortest clip (2.000 s)',
      },
    ],
    '/work/out',
  );
  assert.deepEqual(plain(lines), [
    '  film trio: made (stream copy), 15.0 s -> /work/out/trio.mp4',
    '  film duo: unchanged, 9.5 s -> /work/out/duo.mp4',
    '  film late: not made: clip shot-3 ended failed',
    '  film bad: not made: assembly_refused: film bad: a crossfade of 3 s is not shorter than the shortest clip (2.000 s)',
  ]);
  assert.deepEqual(describeFilms(undefined, '/work/out'), []);
  assert.deepEqual(
    plain(describeFilms([{ name: 'x', state: 'made', file: 'x.mp4', bytes: 1, sha256, durationSec: 1, method: 're_encode' }], 's3://b/p/')),
    ['  film x: made (re-encoded), 1.0 s -> s3://b/p/x.mp4'],
  );
});
