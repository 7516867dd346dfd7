import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { LocalStorage, SizeMismatchError, StorageError, openStorage } from '../../../storage/index';
import { chunked, manifestRow, scratchPaths } from '../../support/storage';

const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

async function waitFor(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await condition());) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const freshDir = scratchPaths('reelflow-local-storage-');

describe('LocalStorage writes', () => {
  it('streams to the final name atomically with sha256 and byte count', async () => {
    const storage = new LocalStorage(freshDir());
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const progress: number[] = [];
    const result = await storage.write('sub/dir/001-hero.mp4', chunked(data), {
      expectedBytes: data.length,
      onProgress: (b) => progress.push(b),
    });
    assert.equal(result.bytes, data.length);
    assert.equal(result.sha256, sha(data));
    assert.equal(result.location, storage.localPath('sub/dir/001-hero.mp4'));
    assert.deepEqual(await readFile(result.location), data);
    assert.equal(existsSync(`${result.location}.part`), false);
    assert.equal(progress.at(-1), data.length);
    const st = await storage.stat('sub/dir/001-hero.mp4');
    assert.deepEqual(st, { name: 'sub/dir/001-hero.mp4', bytes: data.length, sha256: sha(data) });
  });

  it('never writes through a planted link: x.mp4.part -> victim is refused, saying so, and the victim is untouched', async () => {
    const dir = freshDir();
    const storage = new LocalStorage(dir);
    await mkdir(dir, { recursive: true });
    const victim = join(dir, 'victim.txt');
    await writeFile(victim, 'precious');
    await symlink(victim, join(dir, 'x.mp4.part'));
    for (const resumeFrom of [0, 4]) {
      await assert.rejects(storage.write('x.mp4', chunked(randomBytes(1024)), { resumeFrom }), (e: unknown) => {
        assert.ok(e instanceof StorageError, String(e));
        assert.match(e.message, /x\.mp4\.part is a symbolic link: reelflow never writes through one/);
        return true;
      });
    }
    assert.equal(await readFile(victim, 'utf8'), 'precious');
    assert.equal(existsSync(join(dir, 'x.mp4')), false);
  });

  it('never shows a partial file under the final name', async () => {
    const storage = new LocalStorage(freshDir());
    const body = new PassThrough();
    const writing = storage.write('a.mp4', body);
    // Bytes that reach the .part file now, while the body is still open.
    body.write(randomBytes(3_000_000));
    try {
      // However long a loaded machine takes to land the first block in the .part file.
      await waitFor(async () => (await storage.partialBytes('a.mp4')) > 0, 'the bytes so far live in the .part file');
      assert.equal(await storage.stat('a.mp4'), undefined);
      assert.equal(existsSync(storage.localPath('a.mp4')), false);
    } catch (err) {
      // Let the write end (it fails: the body was cut) rather than leave it hanging.
      body.destroy();
      await writing.catch(() => undefined);
      throw err;
    }
    assert.deepEqual(await storage.list(), [], 'list() never shows a .part');
    body.end(randomBytes(10));
    const result = await writing;
    assert.equal(result.bytes, 3_000_010);
    assert.equal(await storage.partialBytes('a.mp4'), 0);
  });

  it('keeps the .part of a cut download and resumes it, hashing the whole file', async () => {
    const storage = new LocalStorage(freshDir());
    const data = randomBytes(2 * 1024 * 1024 + 5);
    const cut = new Error('socket hang up');
    await assert.rejects(
      storage.write('v.mp4', chunked(data.subarray(0, 1_000_000), 50_000, cut), { expectedBytes: data.length }),
      (err) => err === cut,
    );
    assert.equal(await storage.stat('v.mp4'), undefined);
    const kept = await storage.partialBytes('v.mp4');
    assert.equal(kept, 1_000_000, 'every byte that arrived is kept');
    const result = await storage.write('v.mp4', chunked(data.subarray(kept)), { resumeFrom: kept, expectedBytes: data.length });
    assert.equal(result.sha256, sha(data));
    assert.equal(result.bytes, data.length);
    assert.deepEqual(await readFile(storage.localPath('v.mp4')), data);
    assert.equal(await storage.partialBytes('v.mp4'), 0);
  });

  it('trims a kept part longer than resumeFrom and refuses one shorter', async () => {
    const storage = new LocalStorage(freshDir());
    const data = randomBytes(300_000);
    await assert.rejects(storage.write('t.mp4', chunked(data.subarray(0, 200_000), 10_000, new Error('cut'))));
    const kept = await storage.partialBytes('t.mp4');
    assert.equal(kept, 200_000);
    await assert.rejects(storage.write('t.mp4', chunked(data.subarray(kept + 1)), { resumeFrom: kept + 1 }), StorageError);
    const result = await storage.write('t.mp4', chunked(data.subarray(100_000)), { resumeFrom: 100_000 });
    assert.equal(result.sha256, sha(data));
  });

  it('fails on a short body, keeping the part for a resume', async () => {
    const storage = new LocalStorage(freshDir());
    const data = randomBytes(50_000);
    await assert.rejects(storage.write('s.mp4', chunked(data), { expectedBytes: 60_000 }), (err) => {
      assert.ok(err instanceof SizeMismatchError);
      assert.equal(err.expected, 60_000);
      assert.equal(err.received, 50_000);
      assert.equal(err.kept, true);
      return true;
    });
    assert.equal(await storage.stat('s.mp4'), undefined);
    assert.equal(await storage.partialBytes('s.mp4'), 50_000);
    await storage.discardPartial('s.mp4');
    assert.equal(await storage.partialBytes('s.mp4'), 0);
  });

  it('fails on a long body and discards the part', async () => {
    const storage = new LocalStorage(freshDir());
    await assert.rejects(storage.write('l.mp4', chunked(randomBytes(70_000), 10_000), { expectedBytes: 60_000 }), (err) => {
      assert.ok(err instanceof SizeMismatchError);
      assert.equal(err.kept, false);
      return true;
    });
    assert.equal(await storage.stat('l.mp4'), undefined);
    assert.equal(await storage.partialBytes('l.mp4'), 0);
  });

  it('replaces an existing object only when the new one is complete', async () => {
    const storage = new LocalStorage(freshDir());
    const first = randomBytes(10_000);
    await storage.write('r.mp4', chunked(first));
    await assert.rejects(storage.write('r.mp4', chunked(randomBytes(5_000), 1000, new Error('cut'))));
    assert.deepEqual(await readFile(storage.localPath('r.mp4')), first);
  });

  it('rejects names that escape the directory', async () => {
    const storage = new LocalStorage(freshDir());
    for (const bad of ['../x.mp4', '/abs.mp4', 'a/../../b', '', 'manifest.jsonl', 'x.part', 'a\\b']) {
      await assert.rejects(storage.write(bad, chunked(Buffer.from('x'))), StorageError, bad);
    }
  });
});

describe('LocalStorage manifest', () => {
  it('appends rows and reads them back in order', async () => {
    const storage = new LocalStorage(freshDir());
    assert.deepEqual((await storage.readManifest()).rows, []);
    for (let i = 1; i <= 3; i++) await storage.appendManifest(manifestRow(i));
    assert.deepEqual(
      (await storage.readManifest()).rows.map((r) => r.key),
      ['k1', 'k2', 'k3'],
    );
    const text = await readFile(join(storage.location, 'manifest.jsonl'), 'utf8');
    assert.equal(text.split('\n').length, 4, 'one line per row, newline-terminated');
  });

  it('ignores a torn last line and repairs it before the next append', async () => {
    const storage = new LocalStorage(freshDir());
    await storage.appendManifest(manifestRow(1));
    await storage.appendManifest(manifestRow(2));
    const path = join(storage.location, 'manifest.jsonl');
    const fragment = JSON.stringify(manifestRow(3)).slice(0, 40);
    await appendFile(path, fragment);
    assert.deepEqual(
      (await storage.readManifest()).rows.map((r) => r.key),
      ['k1', 'k2'],
    );
    await storage.appendManifest(manifestRow(4));
    assert.deepEqual(
      (await storage.readManifest()).rows.map((r) => r.key),
      ['k1', 'k2', 'k4'],
    );
    const lines = (await readFile(path, 'utf8')).split('\n');
    assert.equal(lines[2], fragment, 'the fragment stays on a line of its own');
    assert.deepEqual(JSON.parse(lines[3] ?? ''), manifestRow(4));
  });

  it('keeps a complete row whose newline was lost', async () => {
    const storage = new LocalStorage(freshDir());
    await mkdir(storage.location, { recursive: true });
    await writeFile(join(storage.location, 'manifest.jsonl'), JSON.stringify(manifestRow(1)));
    await storage.appendManifest(manifestRow(2));
    assert.deepEqual(
      (await storage.readManifest()).rows.map((r) => r.key),
      ['k1', 'k2'],
    );
  });

  it('readManifestSince() returns only the rows appended since, and starts over when the file is replaced', async () => {
    const storage = new LocalStorage(freshDir());
    assert.deepEqual(await storage.readManifestSince(undefined), { rows: [], skipped: [], fromStart: true, cursor: undefined });
    await storage.appendManifest(manifestRow(1));
    await storage.appendManifest(manifestRow(2));
    const first = await storage.readManifestSince(undefined);
    assert.deepEqual(
      first.rows.map((r) => r.key),
      ['k1', 'k2'],
    );
    assert.equal(first.fromStart, true);
    const path = join(storage.location, 'manifest.jsonl');
    // A torn line is not consumed: it is read again (and skipped) once the next append ends it.
    await appendFile(path, JSON.stringify(manifestRow(3)).slice(0, 30));
    const torn = await storage.readManifestSince(first.cursor);
    const tornLine = { where: `${path}:3`, problem: 'an incomplete last line, without its newline (cut short, or still being written)' };
    assert.deepEqual(torn, { rows: [], skipped: [tornLine], fromStart: false, cursor: first.cursor });
    await storage.appendManifest(manifestRow(4));
    const next = await storage.readManifestSince(torn.cursor);
    assert.deepEqual(
      next.rows.map((r) => r.key),
      ['k4'],
    );
    assert.deepEqual(
      next.skipped.map((s) => s.where),
      [`${path}:3`],
      'the ended torn line, under its number',
    );
    assert.equal(next.fromStart, false);
    assert.deepEqual((await storage.readManifestSince(next.cursor)).rows, []);
    // Replaced (a new file under the name): everything again, flagged.
    const text = await readFile(path);
    await rm(path);
    await writeFile(path, text);
    const replaced = await storage.readManifestSince(next.cursor);
    assert.deepEqual(
      replaced.rows.map((r) => r.key),
      ['k1', 'k2', 'k4'],
    );
    assert.equal(replaced.fromStart, true);
    // Shrunk in place: also from the start.
    await writeFile(path, `${JSON.stringify(manifestRow(9))}\n`);
    const shrunk = await storage.readManifestSince(replaced.cursor);
    assert.deepEqual(
      shrunk.rows.map((r) => r.key),
      ['k9'],
    );
    assert.equal(shrunk.fromStart, true);
    // Rewritten in place and longer than before: same inode and birth time, other bytes before the offset.
    const inode = (await stat(path)).ino;
    await writeFile(path, [5, 6, 7].map((i) => `${JSON.stringify(manifestRow(i, { prompt: 'rewritten in place' }))}\n`).join(''));
    assert.equal((await stat(path)).ino, inode);
    const rewritten = await storage.readManifestSince(shrunk.cursor);
    assert.deepEqual(
      rewritten.rows.map((r) => r.key),
      ['k5', 'k6', 'k7'],
    );
    assert.equal(rewritten.fromStart, true);
    await storage.appendManifest(manifestRow(8));
    assert.deepEqual(
      (await storage.readManifestSince(rewritten.cursor)).rows.map((r) => r.key),
      ['k8'],
    );
  });

  it('never interleaves concurrent appends', async () => {
    const storage = new LocalStorage(freshDir());
    const big = 'x'.repeat(200_000);
    await Promise.all(Array.from({ length: 60 }, (_, i) => storage.appendManifest(manifestRow(i, { prompt: `${i}:${big}` }))));
    const rows = (await storage.readManifest()).rows;
    assert.equal(rows.length, 60);
    assert.deepEqual(new Set(rows.map((r) => r.key)), new Set(Array.from({ length: 60 }, (_, i) => `k${i}`)));
    for (const r of rows) assert.equal(r.prompt, `${r.index}:${big}`);
  });

  it('stat() takes the sha256 from the latest succeeded manifest row, else hashes the file', async () => {
    const storage = new LocalStorage(freshDir());
    const data = randomBytes(1000);
    await storage.write('m.mp4', chunked(data));
    assert.equal((await storage.stat('m.mp4'))?.sha256, sha(data));
    const vouched = 'a'.repeat(64);
    await storage.appendManifest(manifestRow(1, { file: 'm.mp4', bytes: 1000, sha256: vouched }));
    assert.equal((await storage.stat('m.mp4'))?.sha256, vouched, 'read from the manifest, not hashed');
    await storage.appendManifest(manifestRow(2, { file: 'm.mp4', bytes: 1000, sha256: 'b'.repeat(64), state: 'failed' }));
    assert.equal((await storage.stat('m.mp4'))?.sha256, vouched, 'failed rows do not count');
    await storage.appendManifest(manifestRow(3, { file: 'm.mp4', bytes: 999, sha256: 'c'.repeat(64) }));
    assert.equal((await storage.stat('m.mp4'))?.sha256, sha(data), 'a row of another size does not vouch for this file');
  });
});

describe('LocalStorage listing and checks', () => {
  it('lists finished objects only', async () => {
    const storage = new LocalStorage(freshDir());
    await storage.write('b.mp4', chunked(Buffer.from('bb')));
    await storage.write('nested/a.mp4', chunked(Buffer.from('a')));
    await assert.rejects(storage.write('c.mp4', chunked(Buffer.from('ccc'), 1, new Error('cut'))));
    await storage.appendManifest(manifestRow(1, { file: 'b.mp4', bytes: 2, sha256: 'd'.repeat(64) }));
    await writeFile(join(storage.location, '.hidden'), 'x');
    assert.deepEqual(await storage.list(), [
      { name: 'b.mp4', bytes: 2, sha256: 'd'.repeat(64) },
      { name: 'nested/a.mp4', bytes: 1, sha256: undefined },
    ]);
  });

  it('checkWritable() leaves no folder it created behind, and names the directory when it cannot write', async () => {
    const dir = freshDir();
    await new LocalStorage(join(dir, 'deep', 'er')).checkWritable();
    await assert.rejects(stat(join(dir, 'deep')), 'the folders the check created are removed (docs/commands.md)');
    await mkdir(join(dir, 'kept'), { recursive: true });
    await new LocalStorage(join(dir, 'kept')).checkWritable();
    assert.ok((await stat(join(dir, 'kept'))).isDirectory(), 'a folder that was there stays');
    assert.deepEqual(await new LocalStorage(join(dir, 'kept')).list(), [], 'no probe left behind');
    await writeFile(join(dir, 'file'), 'x');
    const blocked = new LocalStorage(join(dir, 'file', 'out'));
    await assert.rejects(blocked.checkWritable(), (err) => {
      assert.ok(err instanceof StorageError);
      assert.match(err.message, /output directory .*file\/out is not writable/);
      return true;
    });
  });

  it('openStorage() picks the backend from the settings', () => {
    const dir = freshDir();
    const storage = openStorage({ storage: 'local', dir });
    assert.ok(storage instanceof LocalStorage);
    assert.equal(storage.location, dir);
    assert.throws(() => openStorage({ storage: 's3' }), StorageError);
  });
});
