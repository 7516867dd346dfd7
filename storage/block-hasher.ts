// sha256 of a part file's bytes as they pass through its staging memory: on a thread of its own
// for big files, in-process for small ones. sha256 costs about 0.6 s of CPU per GiB; on the main
// thread, beside the HTTP client, it held a 1 GiB download well under curl's speed.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { StorageError } from './storage';

export interface BlockHasher {
  /** Hashes bytes [offset, offset + length) of the staging memory; resolves once it may be reused. */
  update(offset: number, length: number): Promise<void>;
  /** Hex sha256 of the prefix and every update. */
  finish(): Promise<string>;
  /** The write failed: stop, and let finish() reject. */
  cancel(): void;
}

export interface HasherOptions {
  memory: SharedArrayBuffer;
  /** A resumed part: its first `prefixBytes` bytes are read from `path` and hashed first. */
  path: string;
  prefixBytes: number;
  /** Bytes the whole file will have (unknown: assume it is big). */
  expectedBytes: number | undefined;
}

// The thread costs about 9 MiB of RSS, which a file under this size does not repay (32 MiB hash
// in about 20 ms).
const THREAD_MIN_BYTES = 32 << 20;

export function blockHasher(options: HasherOptions): BlockHasher {
  const big = options.expectedBytes === undefined || options.expectedBytes >= THREAD_MIN_BYTES;
  return big ? new ThreadBlockHasher(options) : new InProcessBlockHasher(options);
}

/** sha256 of a file's first `bytes` bytes (all of it when undefined). */
export async function hashFilePrefix(path: string, bytes?: number, hash: Hash = createHash('sha256')): Promise<Hash> {
  if (bytes === 0) return hash;
  const stream = createReadStream(path, { highWaterMark: 1 << 20, ...(bytes !== undefined ? { end: bytes - 1 } : {}) });
  let seen = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk);
    seen += chunk.length;
  }
  if (bytes !== undefined && seen !== bytes) throw new StorageError(`cannot hash ${path}: it ends at byte ${seen}, before byte ${bytes}`);
  return hash;
}

class InProcessBlockHasher implements BlockHasher {
  private readonly hash: Promise<Hash>;
  private failed: Error | undefined;

  constructor(private readonly options: HasherOptions) {
    this.hash = hashFilePrefix(options.path, options.prefixBytes);
    this.hash.catch(() => undefined);
  }

  async update(offset: number, length: number): Promise<void> {
    (await this.hash).update(new Uint8Array(this.options.memory, offset, length));
  }

  async finish(): Promise<string> {
    if (this.failed) throw this.failed;
    return (await this.hash).digest('hex');
  }

  cancel(): void {
    this.failed = new StorageError(`cannot hash ${this.options.path}: the write was abandoned`);
  }
}

// The hashing thread's whole program (CommonJS, run with `eval`, so it needs no build step of its
// own). Messages for one file arrive in order: open (hash the kept prefix), update..., finish.
const HASH_THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { closeSync, openSync, readSync } = require('node:fs');
const { createHash } = require('node:crypto');
const files = new Map();
function hashPrefix(hash, path, bytes) {
  if (bytes === 0) return;
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (let done = 0; done < bytes;) {
      const n = readSync(fd, buffer, 0, Math.min(buffer.length, bytes - done), done);
      if (n === 0) throw new Error('it ends at byte ' + done + ', before byte ' + bytes);
      hash.update(buffer.subarray(0, n));
      done += n;
    }
  } finally {
    closeSync(fd);
  }
}
parentPort.on('message', ({ id, op, memory, path, prefixBytes, offset, length, token }) => {
  if (op === 'open') {
    const file = { hash: createHash('sha256'), memory, error: undefined };
    files.set(id, file);
    try {
      hashPrefix(file.hash, path, prefixBytes);
    } catch (error) {
      file.error = String((error && error.message) || error);
    }
    return;
  }
  if (op === 'cancel') return files.delete(id);
  // Every update and finish gets exactly one answer (the caller counts on it), errors included.
  const file = files.get(id);
  if (op === 'finish') files.delete(id);
  if (!file || file.error) return parentPort.postMessage({ id, token, error: file ? file.error : 'no such file' });
  try {
    if (op === 'update') {
      file.hash.update(new Uint8Array(file.memory, offset, length));
      parentPort.postMessage({ id, token });
    } else {
      parentPort.postMessage({ id, sha256: file.hash.digest('hex') });
    }
  } catch (error) {
    file.error = String((error && error.message) || error);
    parentPort.postMessage({ id, token, error: file.error });
  }
});
`;

type ThreadRequest =
  | { id: number; op: 'open'; memory: SharedArrayBuffer; path: string; prefixBytes: number }
  | { id: number; op: 'update'; offset: number; length: number; token: number }
  | { id: number; op: 'finish' | 'cancel' };
type ThreadAnswer = { id: number; token?: number; sha256?: string; error?: string };

/**
 * One hashing thread per process, started on first use and shared by every big file being
 * written. It keeps the process alive only while somebody waits for an answer: a write abandoned
 * half-way must not hold the process open.
 */
class HashThread {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly listeners = new Map<number, (answer: ThreadAnswer) => void>();
  private waiting = 0;

  register(onAnswer: (answer: ThreadAnswer) => void): number {
    const id = this.nextId++;
    this.listeners.set(id, onAnswer);
    return id;
  }

  forget(id: number): void {
    this.listeners.delete(id);
  }

  send(request: ThreadRequest, expectsAnswer: boolean): void {
    const worker = this.worker ?? this.start();
    if (expectsAnswer) this.waiting += 1;
    if (this.waiting > 0) worker.ref();
    worker.postMessage(request);
  }

  private start(): Worker {
    const worker = new Worker(HASH_THREAD_SOURCE, { eval: true, name: 'reelflow-sha256' });
    worker.unref();
    worker.on('message', (answer: ThreadAnswer) => {
      this.waiting = Math.max(0, this.waiting - 1);
      if (this.waiting === 0) worker.unref();
      this.listeners.get(answer.id)?.(answer);
    });
    const fail = (error: unknown): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.waiting = 0;
      const message = `the sha256 thread stopped: ${error instanceof Error ? error.message : String(error)}`;
      for (const [id, onAnswer] of [...this.listeners]) onAnswer({ id, error: message });
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
    this.worker = worker;
    return worker;
  }
}

const hashThread = new HashThread();

class ThreadBlockHasher implements BlockHasher {
  private readonly id: number;
  private readonly pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private nextToken = 1;
  private result: { resolve: (sha256: string) => void; reject: (error: Error) => void } | undefined;
  private failure: Error | undefined;

  constructor(private readonly options: HasherOptions) {
    this.id = hashThread.register((answer) => this.onAnswer(answer));
    hashThread.send({ id: this.id, op: 'open', memory: options.memory, path: options.path, prefixBytes: options.prefixBytes }, false);
  }

  update(offset: number, length: number): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const token = this.nextToken++;
    const done = new Promise<void>((resolve, reject) => this.pending.set(token, { resolve, reject }));
    hashThread.send({ id: this.id, op: 'update', offset, length, token }, true);
    return done;
  }

  finish(): Promise<string> {
    if (this.failure) return Promise.reject(this.failure);
    const digest = new Promise<string>((resolve, reject) => { this.result = { resolve, reject }; });
    hashThread.send({ id: this.id, op: 'finish' }, true);
    return digest;
  }

  cancel(): void {
    // Also after a failure: the thread keeps a file (and its staging memory) until told.
    hashThread.send({ id: this.id, op: 'cancel' }, false);
    this.fail(new StorageError(`cannot hash ${this.options.path}: the write was abandoned`));
  }

  private onAnswer(answer: ThreadAnswer): void {
    if (answer.error !== undefined) {
      this.fail(new StorageError(`cannot hash ${this.options.path}: ${answer.error}`));
    } else if (answer.sha256 !== undefined) {
      hashThread.forget(this.id);
      this.result?.resolve(answer.sha256);
    } else if (answer.token !== undefined) {
      this.pending.get(answer.token)?.resolve();
      this.pending.delete(answer.token);
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    hashThread.forget(this.id);
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
    this.result?.reject(error);
  }
}
