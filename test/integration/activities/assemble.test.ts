// The assembleFilm activity over real storage (a local directory, and MinIO) and real ffmpeg: the film
// is stored with a record whose sha256, size and duration are the stored file's, it is not made
// again while its clips are the same, it is made again when one changes, and not made (naming the
// clip) while a clip has not succeeded.
import assert from 'node:assert/strict';
import { createReadStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { assembleFilm, type AssembleInput, type FilmOutcome } from '../../../activities/assemble';
import { closeActivityResources, storageFor } from '../../../activities/context';
import type { OutputSettings } from '../../../jobfile/plan';
import { readFilmRecord, readFilmRecords } from '../../../storage/records/films';
import type { Storage } from '../../../storage/storage';
import { makeClip, probeFilm } from '../../support/clips';
import { tempDir } from '../../support/jobs';
import { startS3Server, type S3TestServer } from '../../support/s3-server';
import { manifestRow } from '../../support/storage';
import { appendPicks, pickOn } from '../../../storage/records/picks';

after(() => closeActivityResources());

function run(input: AssembleInput): Promise<FilmOutcome> {
  return new MockActivityEnvironment().run(assembleFilm, input);
}

/** Stores a clip as a render would (the write, then its succeeded row) and returns its sha256. */
async function storeClip(storage: Storage, n: number, path: string, extra: Parameters<typeof manifestRow>[1] = {}): Promise<string> {
  const written = await storage.write(`shot-${n}.mp4`, createReadStream(path));
  await storage.appendManifest(
    manifestRow(n, { key: `shot-${n}`, file: written.name, bytes: written.bytes, sha256: written.sha256, ...extra }),
  );
  return written.sha256;
}

describe('assembleFilm on a local output directory', () => {
  const dir = tempDir('reelflow-film-');
  const output: OutputSettings = { storage: 'local', dir: join(dir, 'out') };
  const clips = [1, 2, 3].map((n) => makeClip(join(dir, `c${n}.mp4`), { seconds: 2, tone: 300 + 100 * n }));
  const assembly = { name: 'story', keys: ['shot-1', 'shot-2', 'shot-3'], crossfadeSec: 0.5 };

  it('stores the film and its record; leaves it while the clips are the same; makes it again when one changes', async () => {
    const storage = storageFor(output);
    for (const [i, clip] of clips.entries()) await storeClip(storage, i + 1, clip);

    const first = await run({ output, assembly });
    assert.equal(first.state, 'made', JSON.stringify(first));
    assert.ok(first.state === 'made');
    const path = join(output.dir!, 'story.mp4');
    const probed = probeFilm(path);
    assert.ok(Math.abs(probed.seconds - (6 - 2 * 0.5)) < 0.1, `duration ${probed.seconds}`);
    const record = await readFilmRecord(storage, 'story');
    assert.ok(record);
    assert.equal(record.file, 'story.mp4');
    assert.equal(record.bytes, statSync(path).size);
    assert.equal(record.sha256, (await storage.stat('story.mp4'))!.sha256 ?? first.sha256);
    assert.ok(Math.abs(record.duration_sec - probed.seconds) < 0.001);
    assert.equal(record.method, 're_encode');
    assert.deepEqual(
      record.clips.map((c) => c.key),
      ['shot-1', 'shot-2', 'shot-3'],
    );
    const madeAt = statSync(path).mtimeMs;

    const again = await run({ output, assembly });
    assert.equal(again.state, 'unchanged');
    assert.equal(statSync(path).mtimeMs, madeAt, 'the film was not written again');

    // Shot 2 redone: a new video under its name, a new row.
    const redone = makeClip(join(dir, 'c2-redone.mp4'), { seconds: 3, tone: 1000 });
    await storeClip(storage, 2, redone);
    const remade = await run({ output, assembly });
    assert.equal(remade.state, 'made');
    assert.ok(remade.state === 'made');
    assert.notEqual(remade.sha256, first.sha256);
    assert.ok(Math.abs(probeFilm(path).seconds - (7 - 2 * 0.5)) < 0.1);
    assert.equal((await readFilmRecord(storage, 'story'))!.sha256, remade.sha256);
    assert.deepEqual(
      (await readFilmRecords(storage)).map((f) => f.name),
      ['story'],
    );
  });

  it('is not made while a clip has not succeeded, and says which', async () => {
    const storage = storageFor(output);
    await storage.appendManifest(manifestRow(3, { key: 'shot-3', state: 'failed', error: { kind: 'render_failed', message: 'no' } }));
    const outcome = await run({ output, assembly });
    assert.equal(outcome.state, 'not_made');
    assert.ok(outcome.state === 'not_made');
    assert.deepEqual(outcome.clip, { key: 'shot-3', state: 'failed' });
    assert.match(outcome.reason, /clip shot-3 ended failed/);
    const missing = await run({ output, assembly: { name: 'other', keys: ['shot-1', 'shot-9'] } });
    assert.ok(missing.state === 'not_made');
    assert.deepEqual(missing.clip, { key: 'shot-9', state: 'missing' });
  });

  it('cuts the kept take of a shot once picks exist', async () => {
    const storage = storageFor(output);
    const takes = [1, 2].map((t) => makeClip(join(dir, `take-${t}.mp4`), { seconds: 1 + t }));
    for (const [i, clip] of takes.entries()) {
      const written = await storage.write(`shot-5~t${i + 1}.mp4`, createReadStream(clip));
      await storage.appendManifest(
        manifestRow(5, { key: `shot-5~t${i + 1}`, take: i + 1, file: written.name, bytes: written.bytes, sha256: written.sha256 }),
      );
    }
    await storeClip(storage, 6, clips[2]!);
    const assembly5 = { name: 'picked', keys: ['shot-5~t1', 'shot-6'] };
    assert.ok((await run({ output, assembly: assembly5 })).state === 'made');
    assert.equal((await readFilmRecord(storage, 'picked'))!.clips[0]!.key, 'shot-5~t1');
    const rows = (await storage.readManifest()).rows;
    await appendPicks(storage, [
      pickOn(
        rows.find((r) => r.key === 'shot-5~t2')!,
        'keep',
        new Date().toISOString(),
      ),
    ]);
    const remade = await run({ output, assembly: assembly5 });
    assert.equal(remade.state, 'made', 'a new kept take is a changed clip');
    assert.equal((await readFilmRecord(storage, 'picked'))!.clips[0]!.key, 'shot-5~t2');
    assert.ok(Math.abs(probeFilm(join(output.dir!, 'picked.mp4')).seconds - (3 + 2)) < 0.1);
  });

  it('never replaces the video of an item named like the film', async () => {
    const storage = storageFor(output);
    await storeClip(storage, 7, clips[0]!);
    const before = readFileSync(join(output.dir!, 'shot-7.mp4'));
    await assert.rejects(
      run({ output, assembly: { name: 'shot-7', keys: ['shot-1', 'shot-3'] } }),
      /shot-7\.mp4 is the video of item shot-7/,
    );
    assert.deepEqual(readFileSync(join(output.dir!, 'shot-7.mp4')), before);
  });

  it("refuses a clip whose bytes are no longer its row's, naming it", async () => {
    const storage = storageFor(output);
    await storeClip(storage, 3, clips[2]!);
    writeFileSync(join(output.dir!, 'shot-1.mp4'), readFileSync(clips[1]!));
    await assert.rejects(
      run({ output, assembly: { name: 'tampered', keys: ['shot-1', 'shot-3'] } }),
      /clip shot-1: shot-1\.mp4 is not the video its manifest row records/,
    );
  });
});

describe('assembleFilm on S3 (MinIO)', () => {
  let server: S3TestServer;
  const saved = { ...process.env };
  before(async () => {
    server = await startS3Server({ kind: 'minio' });
    await server.createBucket('films');
    Object.assign(process.env, server.env);
  });
  after(async () => {
    process.env = saved;
    await server?.stop();
  });

  it('reads the clips from the bucket and stores the film and its record there, by stream copy when they agree', async () => {
    const dir = tempDir('reelflow-film-s3-');
    const output: OutputSettings = {
      storage: 's3',
      s3: {
        bucket: 'films',
        prefix: `job-${randomBytes(3).toString('hex')}/`,
        region: server.region,
        endpoint: server.endpoint,
        forcePathStyle: true,
      },
    };
    const storage = storageFor(output);
    for (const n of [1, 2]) await storeClip(storage, n, makeClip(join(dir, `s${n}.mp4`), { seconds: 2 }));
    const outcome = await run({ output, assembly: { name: 'cut', keys: ['shot-1', 'shot-2'] } });
    assert.ok(outcome.state === 'made', JSON.stringify(outcome));
    assert.equal(outcome.method, 'stream_copy');
    const stored = await storage.stat('cut.mp4');
    assert.equal(stored?.bytes, outcome.bytes);
    const body = await storage.readObject!('cut.mp4', { start: 0, end: outcome.bytes - 1 });
    const local = join(dir, 'cut.mp4');
    const chunks: Buffer[] = [];
    for await (const chunk of body!) chunks.push(chunk as Buffer);
    writeFileSync(local, Buffer.concat(chunks));
    assert.ok(Math.abs(probeFilm(local).seconds - 4) < 0.1);
    const record = await readFilmRecord(storage, 'cut');
    assert.equal(record?.sha256, outcome.sha256);
    assert.equal((await run({ output, assembly: { name: 'cut', keys: ['shot-1', 'shot-2'] } })).state, 'unchanged');
  });
});
