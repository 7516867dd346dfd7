// A loopback "gateway" run by another local user (uid/gid 65534, nobody): a pass-through proxy in
// front of a real server (the simulator) that tells the test about every request it receives and
// whether it carried a key. The tests run as root, so "another user" is a child spawned under
// nobody's uid; its script lives in a world-readable folder (the test's own are 0700).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { tempDir } from './jobs';

export const NOBODY = 65534;

const FLUSH = '/__flush__/';

export interface SeenRequest {
  method: string;
  path: string;
  /** The Authorization or x-api-key value, as received: what a hostile listener would keep. */
  credential?: string;
}

export interface ForeignListener {
  url: string;
  port: number;
  seen: SeenRequest[];
  /** The requests that carried a key. */
  keyed(): SeenRequest[];
  /** Resolves once every request received so far is in `seen` (its reports arrive through a pipe). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

const SCRIPT = `
const http = require('node:http');
const target = new URL(process.argv[2]);
const server = http.createServer((req, res) => {
  const credential = req.headers.authorization || req.headers['x-api-key'];
  process.stdout.write(JSON.stringify({ method: req.method, path: req.url, credential }) + '\\n');
  const out = http.request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
    (answer) => { res.writeHead(answer.statusCode || 502, answer.headers); answer.pipe(res); },
  );
  out.on('error', () => res.destroy());
  req.pipe(out);
});
server.listen(Number(process.argv[3] || 0), '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
process.on('SIGTERM', () => process.exit(0));
`;

let nodeCopy: string | undefined;

/**
 * A node binary nobody may run: this one, copied once into a world-readable folder. The one running
 * the tests may live where only its owner can reach it (`npm test` brings Node 24 into root's
 * 0700 tool cache), and an exec that nobody cannot reach fails before the listener starts.
 */
function nodeForNobody(): string {
  if (nodeCopy) return nodeCopy;
  const dir = tempDir('reelflow-foreign-node-');
  chmodSync(dir, 0o755);
  const copy = join(dir, 'node');
  copyFileSync(process.execPath, copy);
  chmodSync(copy, 0o755);
  return (nodeCopy = copy);
}

/** Starts the listener as uid/gid nobody in front of `target`, on `port` (any free one unless given). */
export async function startForeignListener(target: string, port = 0): Promise<ForeignListener> {
  const dir = tempDir('reelflow-foreign-listener-');
  chmodSync(dir, 0o755);
  const script = join(dir, 'listener.cjs');
  writeFileSync(script, SCRIPT, { mode: 0o644 });
  const child: ChildProcess = spawn(nodeForNobody(), [script, target, String(port)], {
    uid: NOBODY,
    gid: NOBODY,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const seen: SeenRequest[] = [];
  let flushes = 0;
  const listening = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the foreign listener exited (${code}) before listening`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const event = JSON.parse(line) as { port?: number } & SeenRequest;
      if (event.port !== undefined) resolve(event.port);
      else seen.push(event);
    });
  });
  return {
    url: `http://127.0.0.1:${listening}`,
    port: listening,
    seen,
    keyed: () => seen.filter((r) => r.credential !== undefined && !r.path.startsWith(FLUSH)),
    flush: async () => {
      const path = `${FLUSH}${++flushes}`;
      const answer = await fetch(`http://127.0.0.1:${listening}${path}`);
      await answer.arrayBuffer();
      while (!seen.some((r) => r.path === path)) await new Promise((r) => setTimeout(r, 10));
    },
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
