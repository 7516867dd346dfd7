import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { SizeMismatchError } from './errors';
import { StorageError } from './storage';

export interface DigestOptions {
  /** Object name, for error messages. */
  name: string;
  /** Bytes already in the object before this stream (a resumed write); they are not re-counted here. */
  startBytes?: number;
  /** Hash state already fed with the first `startBytes` bytes. */
  hash?: Hash;
  /** Fail unless the object ends at exactly this many bytes (counting `startBytes`). */
  expectedBytes?: number;
  onProgress?: (bytesSoFar: number) => void;
  /**
   * Fail at the end of the stream when fewer than `expectedBytes` arrived (default true), before
   * the sink can commit. Local storage turns this off and checks after its sink has flushed, so
   * that every byte that arrived is kept in the `.part` for a resume.
   */
  checkShortAtEnd?: boolean;
  /**
   * Hand chunks on one by one instead of concatenated (a byte-mode Readable joins everything
   * buffered on each read): saves a full copy when the consumer assembles its own parts (S3).
   */
  passChunks?: boolean;
}

/**
 * A pass-through that hashes (sha256) and counts the bytes flowing to storage, so neither backend
 * buffers the object. It fails the stream as soon as more than `expectedBytes` arrive and, at the
 * end, when fewer did: the failure then reaches the sink before it commits anything.
 */
export class DigestStream extends Transform {
  private readonly hash: Hash;
  private total: number;
  private digestHex: string | undefined;
  /** Why the stream failed because of a size check (not a body or sink error). */
  sizeError: SizeMismatchError | undefined;

  constructor(private readonly options: DigestOptions) {
    super(options.passChunks ? { writableHighWaterMark: 1 << 20, readableObjectMode: true, readableHighWaterMark: 16 } : { highWaterMark: 1 << 20 });
    this.hash = options.hash ?? createHash('sha256');
    this.total = options.startBytes ?? 0;
  }

  get bytes(): number {
    return this.total;
  }

  /** Hex sha256 of the whole object; only after the stream ended successfully. */
  get sha256(): string {
    if (this.digestHex === undefined) throw new Error('DigestStream: sha256 read before the stream ended');
    return this.digestHex;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.total += chunk.length;
    const { expectedBytes } = this.options;
    if (expectedBytes !== undefined && this.total > expectedBytes) {
      this.sizeError = new SizeMismatchError(this.options.name, expectedBytes, this.total, false);
      callback(this.sizeError);
      return;
    }
    this.hash.update(chunk);
    this.options.onProgress?.(this.total);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const { expectedBytes } = this.options;
    if (expectedBytes !== undefined && this.total !== expectedBytes && this.options.checkShortAtEnd !== false) {
      this.sizeError = new SizeMismatchError(this.options.name, expectedBytes, this.total, false);
      callback(this.sizeError);
      return;
    }
    this.digestHex = this.hash.digest('hex');
    callback();
  }
}

// The hashing thread's whole program (CommonJS, run with `eval` so it needs no separate build
// step). It reads each file back from the page cache just behind its writer and hashes it there:
// sha256 costs about 0.6 s of CPU per GiB, which on the main thread (where the HTTP client also
// runs) capped a 1 GiB download well below curl; on its own thread it runs beside the download.
const HASH_THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { closeSync, openSync, readSync } = require('node:fs');
const { createHash } = require('node:crypto');
const files = new Map();
const buffer = Buffer.allocUnsafe(1 << 20);
function hashUpTo(file, upTo) {
  while (file.done < upTo) {
    const n = readSync(file.fd, buffer, 0, Math.min(buffer.length, upTo - file.done), file.done);
    if (n === 0) throw new Error('the file ends at byte ' + file.done + ', before byte ' + upTo);
    file.hash.update(buffer.subarray(0, n));
    file.done += n;
  }
}
function forget(id) {
  const file = files.get(id);
  files.delete(id);
  if (file) closeSync(file.fd);
}
parentPort.on('message', ({ id, op, path, upTo }) => {
  try {
    if (op === 'open') files.set(id, { fd: openSync(path, 'r'), hash: createHash('sha256'), done: 0 });
    const file = files.get(id);
    if (op === 'cancel' || !file) return forget(id);
    hashUpTo(file, upTo);
    if (op === 'finish') {
      const sha256 = file.hash.digest('hex');
      forget(id);
      parentPort.postMessage({ id, sha256 });
    }
  } catch (error) {
    try { forget(id); } catch {}
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
});
`;

type HashThreadRequest = { id: number; op: 'open' | 'advance' | 'finish' | 'cancel'; path?: string; upTo?: number };
type HashThreadAnswer = { id: number; sha256?: string; error?: string };

/**
 * One hashing thread per process, started on first use and shared by every file being written.
 * It holds the process open only while some file is being hashed.
 */
class HashThread {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly open = new Map<number, (answer: HashThreadAnswer) => void>();

  /** Registers a file; `onAnswer` gets its digest or the error that ended it. */
  add(path: string, onAnswer: (answer: HashThreadAnswer) => void): number {
    const id = this.nextId++;
    this.open.set(id, onAnswer);
    this.post(this.worker ?? this.start(), { id, op: 'open', path, upTo: 0 });
    return id;
  }

  /** Another request about a registered file; dropped when the thread already gave up on it. */
  send(request: HashThreadRequest): void {
    if (!this.worker || !this.open.has(request.id)) return;
    if (request.op === 'cancel') this.open.delete(request.id);
    this.post(this.worker, request);
  }

  private post(worker: Worker, request: HashThreadRequest): void {
    worker.postMessage(request);
    if (this.open.size > 0) worker.ref();
    else worker.unref();
  }

  private start(): Worker {
    const worker = new Worker(HASH_THREAD_SOURCE, { eval: true, name: 'reelflow-sha256' });
    worker.on('message', (answer: HashThreadAnswer) => {
      const onAnswer = this.open.get(answer.id);
      this.open.delete(answer.id);
      if (this.open.size === 0) worker.unref();
      onAnswer?.(answer);
    });
    const fail = (error: unknown): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      const answers = [...this.open.values()];
      this.open.clear();
      const message = `the sha256 thread stopped: ${error instanceof Error ? error.message : String(error)}`;
      for (const onAnswer of answers) onAnswer({ id: 0, error: message });
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
    this.worker = worker;
    return worker;
  }
}

const hashThread = new HashThread();

/** Messages to the thread are batched: one per this many newly written bytes. */
const ADVANCE_STEP = 4 << 20;

/**
 * The sha256 of a file, computed on the hashing thread while the file is being written. The
 * writer reports how far the file is written (`advance`); the thread reads those bytes back and
 * hashes them, so the digest covers exactly the bytes in the file, including any bytes a resumed
 * write found there.
 */
export class FileDigest {
  private readonly id: number;
  private readonly result: Promise<string>;
  private settle!: (answer: HashThreadAnswer) => void;
  private reported = 0;
  private closed = false;

  constructor(path: string) {
    this.result = new Promise<string>((resolve, reject) => {
      this.settle = (answer) => (answer.sha256 !== undefined ? resolve(answer.sha256)
        : reject(new StorageError(`cannot hash ${path}: ${answer.error ?? 'no answer'}`)));
    });
    // A failure is reported by finish(); until someone asks, it must not count as unhandled.
    this.result.catch(() => undefined);
    this.id = hashThread.add(path, (answer) => this.settle(answer));
  }

  /** The file's bytes [0, `upTo`) are written and may be hashed. */
  advance(upTo: number): void {
    if (this.closed || upTo - this.reported < ADVANCE_STEP) return;
    this.reported = upTo;
    hashThread.send({ id: this.id, op: 'advance', upTo });
  }

  /** Hex sha256 of the file's first `size` bytes (all of it, once the writer is done). */
  finish(size: number): Promise<string> {
    if (!this.closed) {
      this.closed = true;
      hashThread.send({ id: this.id, op: 'finish', upTo: size });
    }
    return this.result;
  }

  /** The write failed: the thread stops hashing this file. */
  cancel(): void {
    if (this.closed) return;
    this.closed = true;
    hashThread.send({ id: this.id, op: 'cancel' });
    this.settle({ id: this.id, error: 'the write was abandoned' });
  }
}
