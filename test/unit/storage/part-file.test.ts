import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, it } from 'node:test';
import { stagingArea } from '../../../storage/direct-io';
import { PartFileWriter } from '../../../storage/part-file';
import { LocalStorage, hashFile } from '../../../storage/index';
import { chunked, scratchPaths } from '../../support/storage';

const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');
const MIB = 1024 * 1024;

/** Bytes whose every page differs, so a block written at the wrong offset shows. */
function pattern(bytes: number): Buffer {
  const data = randomBytes(bytes);
  for (let i = 0; i + 4 <= bytes; i += 4096) data.writeUInt32BE(i, i);
  return data;
}

// Direct I/O where the platform has it (Linux), and the buffered writes used elsewhere.
const modes = [
  { kind: 'direct I/O', directIo: true, direct: process.platform === 'linux' },
  { kind: 'buffered', directIo: false, direct: false },
];

for (const mode of modes) {
  describe(`PartFileWriter (${mode.kind})`, () => {
    const opts = { directIo: mode.directIo };
    const freshPath = scratchPaths('reelflow-part-file-');

    it(`${mode.direct ? 'finds aligned staging memory' : 'writes through the page cache'}, and leaves no probe file`, async () => {
      const dir = freshPath();
      await mkdir(dir);
      const area = await stagingArea(dir, MIB, mode.directIo);
      assert.equal(area.direct, mode.direct);
      assert.ok(area.start >= 0 && area.start + MIB <= area.memory.byteLength);
      assert.deepEqual(await readdir(dir), []);
    });

    it('writes and hashes a big file with an unaligned tail, reporting durable progress per block', async () => {
      const data = pattern(40 * MIB + 12_345);
      const path = freshPath();
      const progress: number[] = [];
      const writer = new PartFileWriter(path, { ...opts, name: 'big.mp4', startBytes: 0, expectedBytes: data.length, onProgress: (b) => progress.push(b) });
      await pipeline(chunked(data, 64 * 1024), writer);
      assert.equal(writer.bytes, data.length);
      assert.equal(await writer.sha256(), sha(data));
      assert.deepEqual(await readFile(path), data);
      assert.equal(progress.at(-1), data.length);
      assert.deepEqual(progress, [...progress].sort((a, b) => a - b), 'progress only grows');
      assert.ok(progress.length <= Math.ceil(data.length / MIB), `one report per block of 1 MiB or more (${progress.length} reports)`);
    });

    it('takes chunks bigger than a block, and empty ones', async () => {
      const data = pattern(3 * MIB + 7);
      const path = freshPath();
      const parts = [Buffer.alloc(0), data.subarray(0, 10), Buffer.alloc(0), data.subarray(10, 2 * MIB + 100), data.subarray(2 * MIB + 100), Buffer.alloc(0)];
      const writer = new PartFileWriter(path, { ...opts, name: 'e.mp4', startBytes: 0 });
      await pipeline(Readable.from(parts, { objectMode: false }), writer);
      assert.equal(await writer.sha256(), sha(data));
      assert.deepEqual(await readFile(path), data);
    });

    for (const [hasher, size] of [['in-process', 5 * MIB + 3], ['thread', 40 * MIB + 3]] as const) {
      for (const keptShare of [0.6, 0.25]) {
        it(`continues a kept part at an unaligned byte and hashes it whole (${hasher} sha256, ${keptShare * 100} % kept)`, async () => {
          const data = pattern(size);
          const path = freshPath();
          const kept = Math.floor(size * keptShare) | 1;
          await writeFile(path, data.subarray(0, kept));
          const writer = new PartFileWriter(path, { ...opts, name: 'r.mp4', startBytes: kept, expectedBytes: data.length });
          await pipeline(chunked(data.subarray(kept)), writer);
          assert.equal(writer.bytes, data.length);
          assert.equal(await writer.sha256(), sha(data));
          assert.deepEqual(await readFile(path), data);
        });
      }
    }

    it('a resume that adds nothing keeps the part as it was', async () => {
      const data = pattern(2 * MIB + 5);
      const path = freshPath();
      await writeFile(path, data);
      const writer = new PartFileWriter(path, { ...opts, name: 'same.mp4', startBytes: data.length, expectedBytes: data.length });
      await pipeline(Readable.from([], { objectMode: false }), writer);
      assert.equal(await writer.sha256(), sha(data));
      assert.deepEqual(await readFile(path), data);
    });

    it('keeps every byte that arrived when the body ends early, so a resume can continue', async () => {
      const data = pattern(6 * MIB + 99);
      const path = freshPath();
      const arrived = 2 * MIB + 4097;
      const writer = new PartFileWriter(path, { ...opts, name: 'cut.mp4', startBytes: 0, expectedBytes: data.length });
      await pipeline(chunked(data.subarray(0, arrived)), writer);
      assert.deepEqual(await readFile(path), data.subarray(0, arrived));
      const rest = new PartFileWriter(path, { ...opts, name: 'cut.mp4', startBytes: arrived, expectedBytes: data.length });
      await pipeline(chunked(data.subarray(arrived)), rest);
      assert.equal(await rest.sha256(), sha(data));
      assert.deepEqual(await readFile(path), data);
    });

    it('refuses a chunk that would go past expectedBytes, without writing it', async () => {
      const path = freshPath();
      const writer = new PartFileWriter(path, { ...opts, name: 'l.mp4', startBytes: 0, expectedBytes: 100 });
      await assert.rejects(pipeline(chunked(randomBytes(150), 60), writer), (err) => err === writer.sizeError);
      assert.ok((await stat(path)).size <= 100);
      await assert.rejects(writer.sha256(), /before the write finished/);
    });

    it('fails with a clear error when the kept part is shorter than claimed', async () => {
      const path = freshPath();
      await writeFile(path, 'short');
      const writer = new PartFileWriter(path, { ...opts, name: 's.mp4', startBytes: 10 });
      await assert.rejects(pipeline(chunked(randomBytes(10)), writer), /shorter \(5 bytes\) than its kept 10 bytes/);
    });
  });
}

describe('the hashing thread and process exit', () => {
  it('does not keep the process alive for a write abandoned half-way', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'reelflow-part-exit-'));
    try {
      // A body that never ends, as in a test that fails mid-way: the process must still exit.
      const script = `
        const { PassThrough } = require('node:stream');
        const { LocalStorage } = require(${JSON.stringify(join(__dirname, '../../../storage/local.ts'))});
        const storage = new LocalStorage(${JSON.stringify(dir)});
        const body = new PassThrough();
        storage.write('abandoned.mp4', body).catch(() => undefined);
        body.write(Buffer.alloc(3 * 1024 * 1024));
        const poll = async () => ((await storage.partialBytes('abandoned.mp4')) > 0 ? undefined : setTimeout(poll, 10));
        void poll();
      `;
      const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { timeout: 60_000, encoding: 'utf8' });
      assert.equal(child.signal, null, `the process was still running after 60 s: ${child.stderr}`);
      assert.equal(child.status, 0, child.stderr);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a worker killed in the middle of a write', () => {
  for (const directIo of [true, false]) {
    it(`leaves a part that is an exact prefix, and a resume from its size completes the file (${directIo ? 'direct I/O' : 'buffered'})`, async () => {
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
        const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
          stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, REELFLOW_DIRECT_IO: directIo ? 'on' : 'off' },
        });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
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

        const result = await storage.write('killed.mp4', chunked(data.subarray(kept), 64 * 1024),
          { resumeFrom: kept, expectedBytes: data.length });
        assert.equal(result.sha256, sha(data));
        assert.ok((await readFile(storage.localPath('killed.mp4'))).equals(data));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
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
