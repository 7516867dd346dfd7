// Runs ffmpeg and ffprobe for media/: a bounded child process. Clips come from a gateway, so every
// byte ffmpeg reads is untrusted: each run has a deadline (the whole process group is killed at
// it), its output is capped, and only the tail of its stderr reaches an error message.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** How much of a tool's stderr an error carries: the end, where ffmpeg says what went wrong. */
const STDERR_TAIL_BYTES = 2_000;

export class MediaToolError extends Error {
  override readonly name = 'MediaToolError';
}

/** `/usr/bin/<tool>`, else the first on PATH; `REELFLOW_FFMPEG` / `REELFLOW_FFPROBE` name another. */
export function mediaTool(tool: 'ffmpeg' | 'ffprobe'): string {
  const explicit = process.env[`REELFLOW_${tool.toUpperCase()}`];
  if (explicit) return explicit;
  for (const dir of ['/usr/bin', ...(process.env.PATH ?? '').split(delimiter)]) {
    if (dir && existsSync(join(dir, tool))) return join(dir, tool);
  }
  throw new MediaToolError(
    `${tool} is not installed on this worker (looked in /usr/bin and PATH; REELFLOW_${tool.toUpperCase()} names one)`,
  );
}

export interface RunOptions {
  timeoutMs: number;
  /** Stdout kept at most (ffprobe's JSON); more fails the run. */
  maxStdoutBytes?: number;
  signal?: AbortSignal;
}

/** Runs `tool` with `args` (never through a shell) and returns its stdout; throws with its stderr's tail. */
export function runTool(tool: 'ffmpeg' | 'ffprobe', args: readonly string[], options: RunOptions): Promise<string> {
  const maxStdout = options.maxStdoutBytes ?? 1 << 20;
  return new Promise((resolve, reject) => {
    const child = spawn(mediaTool(tool), args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    let outBytes = 0;
    let errTail = Buffer.alloc(0);
    let failure: string | undefined;
    const kill = (why: string) => {
      failure ??= why;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => kill(`did not finish within ${Math.round(options.timeoutMs / 1000)} s`), options.timeoutMs);
    const onAbort = () => kill('was canceled');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxStdout) kill(`wrote more than ${maxStdout} bytes to stdout`);
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      errTail = Buffer.concat([errTail, chunk]);
      if (errTail.length > STDERR_TAIL_BYTES) errTail = errTail.subarray(errTail.length - STDERR_TAIL_BYTES);
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new MediaToolError(`${tool} could not start: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      const stderr = errTail
        .toString('utf8')
        .replace(/[^\x20-\x7e\n\t]/g, '?')
        .trim();
      if (failure !== undefined || code !== 0) {
        const why = failure ?? `exited with ${code ?? signal}`;
        reject(new MediaToolError(`${tool} ${why}${stderr ? `: ${stderr}` : ''}`));
        return;
      }
      resolve(Buffer.concat(out).toString('utf8'));
    });
  });
}
