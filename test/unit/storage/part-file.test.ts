import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, it } from 'node:test';
import { PartFileWriter } from '../../../storage/objects/part-file';
import { LocalStorage, hashFile } from '../../../storage/index';
import { chunked, scratchPaths } from '../../support/storage';

const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');
const MIB = 1024 * 1024;

/** Bytes whose every page differs, so a chunk written at the wrong offset shows. */
function pattern(bytes: number): Buffer {
  const data = randomBytes(bytes);
  for (let i = 0; i + 4 <= bytes; i += 4096) data.writeUInt32BE(i, i);
  return data;
}

describe('PartFileWriter', () => {
  const freshPath = scratchPaths('reelflow-part-file-');

  it('writes a big body in order, every byte at its offset', async () => {
    const data = pattern(40 * MIB + 12_345);
    const path = freshPath();
    await pipeline(chunked(data, 64 * 1024), new PartFileWriter(path, 0));
    assert.ok((await readFile(path)).equals(data));
  });

  it('takes chunks bigger than its buffer, and empty ones', async () => {
    const data = pattern(3 * MIB + 7);
    const path = freshPath();
    const parts = [
      Buffer.alloc(0),
      data.subarray(0, 10),
      Buffer.alloc(0),
      data.subarray(10, 2 * MIB + 100),
      data.subarray(2 * MIB + 100),
      Buffer.alloc(0),
    ];
    await pipeline(Readable.from(parts, { objectMode: false }), new PartFileWriter(path, 0));
    assert.ok((await readFile(path)).equals(data));
  });

  it('creates a fresh part exclusively (never reusing an existing file), and continues a kept one where it ends', async () => {
    const data = pattern(5 * MIB + 3);
    const path = freshPath();
    await writeFile(path, randomBytes(7 * MIB));
    await assert.rejects(pipeline(chunked(data), new PartFileWriter(path, 0)), /EEXIST/);
    await rm(path);
    const kept = 2 * MIB + 4097;
    await pipeline(chunked(data.subarray(0, kept)), new PartFileWriter(path, 0));
    assert.ok((await readFile(path)).equals(data.subarray(0, kept)));
    await pipeline(chunked(data.subarray(kept)), new PartFileWriter(path, kept));
    assert.ok((await readFile(path)).equals(data));
  });

  it('never writes through a link', async () => {
    const path = freshPath();
    const victim = `${path}.victim`;
    await writeFile(victim, 'precious');
    await symlink(victim, path);
    for (const start of [0, 3]) {
      await assert.rejects(
        pipeline(chunked(pattern(100)), new PartFileWriter(path, start)),
        /is a symbolic link: reelflow never writes through one/,
      );
    }
    assert.equal(await readFile(victim, 'utf8'), 'precious');
  });

  it('fails the stream when the part cannot be opened', async () => {
    const path = join(freshPath(), 'no-such-dir', 'x.mp4.part');
    await assert.rejects(pipeline(chunked(randomBytes(10)), new PartFileWriter(path, 0)), /ENOENT/);
  });
});

describe('a worker killed in the middle of a write', () => {
  it('leaves a part that is an exact prefix, and a resume from its size completes the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'reelflow-part-kill-'));
    try {
      const data = pattern(48 * MIB + 4_321);
      const source = join(dir, 'source.bin');
      await writeFile(source, data);
      const storage = new LocalStorage(join(dir, 'out'));
      // The child writes the source slowly (a chunk at a time, as a download arrives) until killed.
      const script = `
        const { createReadStream } = require('node:fs');
        const { Readable } = require('node:stream');
        const { LocalStorage } = require(${JSON.stringify(join(__dirname, '../../../storage/local.ts'))});
        async function* slowly() {
          for await (const chunk of createReadStream(${JSON.stringify(source)}, { highWaterMark: 256 * 1024 })) {
            yield chunk;
            await new Promise((r) => setTimeout(r, 3));
          }
        }
        new LocalStorage(${JSON.stringify(join(dir, 'out'))}).write('killed.mp4', Readable.from(slowly())).then(() => process.exit(3));
      `;
      const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const deadline = Date.now() + 60_000;
      while ((await storage.partialBytes('killed.mp4')) < 16 * MIB) {
        assert.ok(Date.now() < deadline && child.exitCode === null, `the child did not get 16 MiB into its write: ${stderr}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      child.kill('SIGKILL');
      assert.equal(await exited, null, 'killed before it finished');

      const kept = await storage.partialBytes('killed.mp4');
      assert.ok(kept >= 16 * MIB && kept < data.length, `kept ${kept} bytes`);
      const part = await readFile(storage.localPath('killed.mp4') + '.part');
      assert.ok(part.equals(data.subarray(0, kept)), 'the kept part is exactly the first bytes of the body: no holes, no stray bytes');

      const result = await storage.write('killed.mp4', chunked(data.subarray(kept), 64 * 1024), {
        resumeFrom: kept,
        expectedBytes: data.length,
      });
      assert.equal(result.sha256, sha(data));
      assert.ok((await readFile(storage.localPath('killed.mp4'))).equals(data));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('hashFile', () => {
  it('hashes a file the manifest does not know, for stat()', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'reelflow-hashfile-'));
    try {
      const storage = new LocalStorage(dir);
      const data = randomBytes(2_000_003);
      await storage.write('x.mp4', chunked(data));
      await writeFile(storage.localPath('y.mp4'), data);
      assert.equal((await storage.stat('y.mp4'))?.sha256, sha(data));
      assert.equal(await hashFile(storage.localPath('y.mp4')), sha(data));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
