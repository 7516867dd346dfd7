// media/assemble.ts on real ffmpeg/ffprobe: stream copy when clips agree, a re-encode when they do
// not, crossfades that shorten the film by their length, and nothing under the film's name on failure.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { assembleClips } from '../../../media/assemble';
import { MediaToolError } from '../../../media/run';
import { makeClip, probeFilm, videoPacketSizes } from '../../support/clips';

const dir = mkdtempSync(join(tmpdir(), 'reelflow-assemble-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const options = { timeoutMs: 120_000, maxBytes: 512 << 20 };

test('clips that agree are joined by stream copy: the same coded pictures, the sum of their lengths', async () => {
  const a = makeClip(join(dir, 'a.mp4'), { seconds: 2, tone: 440 });
  const b = makeClip(join(dir, 'b.mp4'), { seconds: 3, tone: 660 });
  const out = join(dir, 'copy.mp4');
  const film = await assembleClips([a, b], out, options);
  assert.equal(film.method, 'stream_copy');
  assert.ok(film.args.includes('copy'), film.args.join(' '));
  // No picture was decoded and encoded again: the film's packets are the clips' packets, in order
  // (a clip's first keyframe may carry its parameter sets in-band, a few dozen bytes more).
  const clipPackets = [...videoPacketSizes(a), ...videoPacketSizes(b)];
  const filmPackets = videoPacketSizes(out);
  assert.equal(filmPackets.length, clipPackets.length);
  const differing = filmPackets.flatMap((size, i) => (size === clipPackets[i] ? [] : [{ i, grew: size - clipPackets[i]! }]));
  assert.deepEqual(
    differing.map((d) => d.i),
    [0, videoPacketSizes(a).length],
  );
  assert.ok(
    differing.every((d) => d.grew > 0 && d.grew < 128),
    JSON.stringify(differing),
  );
  const probed = probeFilm(out);
  assert.ok(Math.abs(probed.seconds - 5) < 0.1, `duration ${probed.seconds}`);
  assert.ok(Math.abs(film.durationSec - probed.seconds) < 0.001);
  assert.deepEqual(probed.streams, ['audio', 'video']);
});

test("clips of different sizes are re-encoded to the first clip's size", async () => {
  const a = makeClip(join(dir, 'wide.mp4'), { seconds: 2 });
  const b = makeClip(join(dir, 'small.mp4'), { seconds: 2, size: '320x240', rate: 30 });
  const out = join(dir, 'mixed.mp4');
  const film = await assembleClips([a, b], out, options);
  assert.equal(film.method, 're_encode');
  const probed = probeFilm(out);
  assert.deepEqual([probed.width, probed.height], [640, 360]);
  assert.ok(Math.abs(probed.seconds - 4) < 0.1, `duration ${probed.seconds}`);
  assert.notDeepEqual(videoPacketSizes(out).slice(0, 48), videoPacketSizes(a));
});

test('a crossfade shortens the film by its length at each cut; a silent clip gets silence', async () => {
  const a = makeClip(join(dir, 'x1.mp4'), { seconds: 2, tone: 440 });
  const b = makeClip(join(dir, 'x2.mp4'), { seconds: 3 });
  const c = makeClip(join(dir, 'x3.mp4'), { seconds: 2, tone: 880 });
  const out = join(dir, 'faded.mp4');
  const film = await assembleClips([a, b, c], out, { ...options, crossfadeSec: 0.5 });
  assert.equal(film.method, 're_encode');
  assert.ok(film.args.some((arg) => arg.includes('xfade') && arg.includes('acrossfade')));
  const probed = probeFilm(out);
  const expected = 2 + 3 + 2 - 2 * 0.5;
  assert.ok(Math.abs(probed.seconds - expected) < 0.1, `duration ${probed.seconds}, expected ${expected}`);
  assert.deepEqual(probed.streams, ['audio', 'video']);
});

test('a crossfade as long as a clip is refused before ffmpeg runs', async () => {
  const a = makeClip(join(dir, 'short.mp4'), { seconds: 1 });
  await assert.rejects(
    assembleClips([a, a], join(dir, 'never.mp4'), { ...options, crossfadeSec: 1 }),
    /not shorter than the shortest clip/,
  );
  assert.equal(existsSync(join(dir, 'never.mp4')), false);
});

test("ffmpeg cut by its deadline leaves nothing under the film's name, and says why", async () => {
  const a = makeClip(join(dir, 'long.mp4'), { seconds: 20, size: '1280x720' });
  const sub = mkdtempSync(join(dir, 'deadline-'));
  const out = join(sub, 'late.mp4');
  await assert.rejects(assembleClips([a, a], out, { ...options, crossfadeSec: 1, timeoutMs: 300 }), (err: unknown) => {
    assert.ok(err instanceof MediaToolError);
    assert.match(err.message, /did not finish within/);
    return true;
  });
  assert.deepEqual(readdirSync(sub), []);
});

test('a film that would pass its byte limit is refused, not cut short', async () => {
  const a = makeClip(join(dir, 'big.mp4'), { seconds: 3, size: '1280x720' });
  const sub = mkdtempSync(join(dir, 'limit-'));
  await assert.rejects(
    assembleClips([a, a], join(sub, 'big-film.mp4'), { ...options, crossfadeSec: 0.5, maxBytes: 20_000 }),
    /more than 20000 bytes/,
  );
  assert.deepEqual(readdirSync(sub), []);
});
