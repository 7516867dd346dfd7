// Fixtures shared by the storage tests.
import { createCipheriv, createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { Readable } from 'node:stream';
import type { ManifestRow } from '../../storage/manifest/row';

/**
 * A scratch directory for the enclosing suite (made before its tests, removed after them); the
 * returned function gives a fresh path inside it on each call.
 */
export function scratchPaths(prefix: string): () => string {
  let root = '';
  let n = 0;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), prefix));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });
  return () => join(root, `case-${n++}`);
}

/** Yields `data` in chunks, then fails with `error` (a download cut mid-stream) if given. */
export function chunked(data: Buffer, chunk = 64 * 1024, error?: Error): Readable {
  return Readable.from(
    (async function* () {
      for (let i = 0; i < data.length; i += chunk) {
        yield data.subarray(i, i + chunk);
        await new Promise((r) => setImmediate(r));
      }
      if (error) throw error;
    })(),
  );
}

/** A manifest row for item `n`; `extra` overrides any field. */
export function manifestRow(n: number, extra: Partial<ManifestRow> = {}): ManifestRow {
  return {
    key: `k${n}`,
    id: `item-${n}`,
    index: n,
    state: 'succeeded',
    model: 'veo',
    protocol: 'general',
    prompt: `prompt ${n}`,
    task_id: `t${n}`,
    base_url: 'http://127.0.0.1:1',
    created_at: null,
    finished_at: new Date(0).toISOString(),
    polls: 1,
    file: null,
    bytes: null,
    sha256: null,
    error: null,
    ...extra,
  };
}

const VIDEO_CHUNK = 64 * 1024;

/**
 * Bytes `start` to `end` (exclusive) of a deterministic pseudo-video named by `seed`: the
 * AES-128-CTR keystream of a key derived from the seed. Any range can be produced on its own, so
 * a test can resume at the byte where a killed writer stopped. `bytesPerSecond` paces the stream
 * like a download, so a writer can be caught mid-write.
 */
export function videoBytes(seed: string, start: number, end: number, options: { bytesPerSecond?: number } = {}): Readable {
  const key = createHash('sha256').update(seed).digest().subarray(0, 16);
  const firstBlock = Math.floor(start / 16);
  const counter = Buffer.alloc(16);
  counter.writeUInt32BE(Math.floor(firstBlock / 2 ** 32), 8);
  counter.writeUInt32BE(firstBlock % 2 ** 32, 12);
  const keystream = createCipheriv('aes-128-ctr', key, counter);
  const zeros = Buffer.alloc(VIDEO_CHUNK + 16);
  const startedAt = Date.now();
  return Readable.from(
    (async function* () {
      let skip = start % 16;
      for (let at = start; at < end;) {
        const n = Math.min(VIDEO_CHUNK, end - at);
        const block = keystream.update(zeros.subarray(0, n + skip));
        yield block.subarray(skip);
        at += n;
        skip = 0;
        if (options.bytesPerSecond) {
          const due = startedAt + ((at - start) / options.bytesPerSecond) * 1000;
          if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
        }
      }
    })(),
  );
}

/** Hex sha256 of everything a stream yields. */
export async function sha256Of(stream: AsyncIterable<Uint8Array>): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk);
  return hash.digest('hex');
}
