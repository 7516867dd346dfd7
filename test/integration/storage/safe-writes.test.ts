// docs/files.md "Nothing is written through a link" and "A file reelflow did not write is never
// replaced" on the local storage, the report and the inputs cache, on a real file system: reelflow never writes through a link planted under its output location, and never
// replaces a file it did not write.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, linkSync, lstatSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { writeReport } from '../../../review/report';
import { InputCache } from '../../../storage/inputs-cache';
import { DirInputStore } from '../../../storage/inputs-local';
import { LocalStorage, StorageError } from '../../../storage/index';
import { chunked, manifestRow, scratchPaths } from '../../support/storage';

const freshDir = scratchPaths('reelflow-safe-writes-');
const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');
const MP4_HEAD = Buffer.from('000000146674797069736f6d00000200', 'hex');

/** A directory with the output location `out` inside it and a victim file beside it. */
async function handedFolder(): Promise<{ root: string; out: string; victim: string }> {
  const root = freshDir();
  const out = join(root, 'out');
  await mkdir(out, { recursive: true });
  const victim = join(root, 'victim.txt');
  await writeFile(victim, 'precious\n');
  return { root, out, victim };
}

function refusedNaming(link: string) {
  return (e: unknown) => {
    assert.ok(e instanceof StorageError, String(e));
    assert.ok(e.message.includes(link), `the message names ${link}: ${e.message}`);
    assert.match(e.message, /symbolic link/);
    return true;
  };
}

describe('no write through a link under the output location', () => {
  it('manifest.jsonl -> a file outside: appending is refused naming the link, the target untouched', async () => {
    const { out, victim } = await handedFolder();
    const link = join(out, 'manifest.jsonl');
    await symlink(victim, link);
    const storage = new LocalStorage(out);
    await assert.rejects(storage.appendManifest(manifestRow(1, { prompt: 'A calm lake $(touch X)' })), refusedNaming(link));
    await assert.rejects(storage.checkWritable(), refusedNaming(link));
    assert.equal(readFileSync(victim, 'utf8'), 'precious\n');
  });

  it('manifest.jsonl as a hard link to a file outside: refused naming it, the target untouched', async () => {
    const { out, victim } = await handedFolder();
    const manifest = join(out, 'manifest.jsonl');
    linkSync(victim, manifest);
    const storage = new LocalStorage(out);
    const refused = (e: unknown) => {
      assert.ok(e instanceof StorageError, String(e));
      assert.ok(e.message.includes(manifest), e.message);
      assert.match(e.message, /other hard link/);
      return true;
    };
    await assert.rejects(storage.appendManifest(manifestRow(1)), refused);
    await assert.rejects(storage.checkWritable(), refused);
    assert.equal(readFileSync(victim, 'utf8'), 'precious\n');
  });

  it('a folder link out/clips -> ../elsewhere: the video is refused naming the link, nothing lands outside', async () => {
    const { root, out } = await handedFolder();
    const elsewhere = join(root, 'elsewhere');
    await mkdir(elsewhere);
    const link = join(out, 'clips');
    await symlink('../elsewhere', link);
    const storage = new LocalStorage(out);
    const video = Buffer.concat([MP4_HEAD, randomBytes(5000)]);
    await assert.rejects(storage.write('clips/a.mp4', chunked(video)), refusedNaming(link));
    await assert.rejects(storage.write('clips/deeper/a.mp4', chunked(video)), refusedNaming(link));
    assert.deepEqual(readdirSync(elsewhere), [], 'nothing written outside the output location');
  });

  it("the report's temporary file planted as a link: the target untouched, the report written", async () => {
    const { out, victim } = await handedFolder();
    await symlink(victim, join(out, `report.html.${process.pid}.tmp`));
    const result = await writeReport({ job: 'j', rows: [], outputDir: out, tools: { ffmpeg: null, ffprobe: null } });
    assert.equal(readFileSync(victim, 'utf8'), 'precious\n');
    assert.match(readFileSync(result.path, 'utf8'), /<html/i);
    assert.ok(lstatSync(result.path).isFile());
  });

  it('report.html itself a link: refused naming it, the target untouched', async () => {
    const { out, victim } = await handedFolder();
    const link = join(out, 'report.html');
    await symlink(victim, link);
    await assert.rejects(writeReport({ job: 'j', rows: [], outputDir: out, tools: { ffmpeg: null, ffprobe: null } }), refusedNaming(link));
    assert.equal(readFileSync(victim, 'utf8'), 'precious\n');
  });

  it('posters -> a folder outside: no poster is written there', async () => {
    const { root, out } = await handedFolder();
    const elsewhere = join(root, 'elsewhere');
    await mkdir(elsewhere);
    await symlink(elsewhere, join(out, 'posters'));
    const storage = new LocalStorage(out);
    const made = join(root, 'made.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=64x64:d=1', '-pix_fmt', 'yuv420p', made]);
    const video = readFileSync(made);
    const written = await storage.write('v.mp4', chunked(video));
    const rows = [manifestRow(1, { file: 'v.mp4', bytes: written.bytes, sha256: written.sha256 })];
    await writeReport({ job: 'j', rows, outputDir: out, tools: {} }).catch(() => undefined);
    assert.deepEqual(readdirSync(elsewhere), [], 'no poster outside the output location');
  });

  it('the inputs cache: a linked sha256 folder is refused naming it, nothing written through it', async () => {
    const { root } = await handedFolder();
    const store = new DirInputStore(join(root, 'store'));
    const bytes = Buffer.from('a reference image');
    const digest = sha(bytes);
    await store.put(digest, bytes.length, () => Readable.from([bytes]));
    const cacheDir = join(root, 'cache');
    const elsewhere = join(root, 'elsewhere');
    await mkdir(cacheDir);
    await mkdir(elsewhere);
    await symlink(elsewhere, join(cacheDir, 'sha256'));
    const cache = new InputCache(cacheDir);
    await assert.rejects(cache.file(store, { sha256: digest, bytes: bytes.length }), refusedNaming(join(cacheDir, 'sha256')));
    assert.deepEqual(readdirSync(elsewhere), []);
  });
});

describe('a file reelflow did not write is never replaced', () => {
  it('an existing file under the output name: the write fails naming it, the file intact; output.overwrite replaces it', async () => {
    const { out } = await handedFolder();
    const mine = join(out, 'hero.mp4');
    await writeFile(mine, 'the user’s own hero video');
    const storage = new LocalStorage(out);
    const video = Buffer.concat([MP4_HEAD, randomBytes(5000)]);
    await assert.rejects(storage.write('hero.mp4', chunked(video)), (e: unknown) => {
      assert.ok(e instanceof StorageError, String(e));
      assert.ok(e.message.includes(mine), e.message);
      assert.match(e.message, /output\.overwrite/);
      return true;
    });
    assert.equal(readFileSync(mine, 'utf8'), 'the user’s own hero video');
    assert.equal(existsSync(`${mine}.part`), false, 'no part left behind');
    const replaced = await storage.write('hero.mp4', chunked(video), { overwrite: true });
    assert.equal(replaced.sha256, sha(video));
    assert.equal(sha(readFileSync(mine)), sha(video));
  });

  it('a file reelflow recorded (manifest row with its size and digest) is replaced; so is one with the same bytes', async () => {
    const { out } = await handedFolder();
    const storage = new LocalStorage(out);
    const first = Buffer.concat([MP4_HEAD, randomBytes(5000)]);
    const written = await storage.write('clip.mp4', chunked(first));
    await storage.appendManifest(manifestRow(1, { file: 'clip.mp4', bytes: written.bytes, sha256: written.sha256 }));
    const second = Buffer.concat([MP4_HEAD, randomBytes(6000)]);
    assert.equal((await storage.write('clip.mp4', chunked(second))).sha256, sha(second));
    // Not recorded (a worker died between storing and recording), but the same bytes again.
    assert.equal((await storage.write('clip.mp4', chunked(second))).sha256, sha(second));
    // Stored by reelflow, never recorded (the run was canceled first), rendered again: other bytes.
    const third = Buffer.concat([MP4_HEAD, randomBytes(7000)]);
    assert.equal((await new LocalStorage(out).write('clip.mp4', chunked(third))).sha256, sha(third));
    assert.deepEqual(
      (await storage.list()).map((o) => o.name),
      ['clip.mp4'],
      'the ledger of stored videos is not listed as an output',
    );
  });
});
