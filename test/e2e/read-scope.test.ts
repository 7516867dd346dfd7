// What a job may read, and that what it sends is what was checked, as a user meets it: a handed job
// file cannot widen its own read scope (only `--allow-read` or the user's reads.yaml can), and a
// reference replaced after the job was planned never reaches the gateway (real Temporal
// development server, real simulator behind a recording proxy, the built CLI).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, startCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir } from '../support/jobs';
import { recordingProxy, type RecordingProxy } from '../support/recording-proxy';

const KEY = 'sk-test-e2e-read-scope-0123456789';
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');

interface Item {
  id: string;
  prompt: string;
  image?: string;
}

function jobText(name: string, baseUrl: string, items: Item[], extra = ''): string {
  return [
    'version: 1',
    `name: ${name}`,
    'gateway:',
    `  base_urls: [${baseUrl}]`,
    'defaults:',
    '  model: seedance-1-0-pro-250528',
    '  seconds: "5"',
    // One item at a time: the second create is sent only after the first item has ended.
    'concurrency:\n  max_in_flight: 1',
    'polling:\n  initial: 300ms\n  max: 1s\n  timeout: 5m',
    'output:\n  dir: ./out',
    extra,
    'items:',
    ...items.flatMap((i) => [
      `  - id: ${i.id}`,
      `    prompt: ${JSON.stringify(i.prompt)}`,
      ...(i.image ? ['    references:', `      - image: ${i.image}`] : []),
    ]),
    '',
  ].join('\n');
}

interface Row {
  key: string;
  state: string;
  error?: { kind: string; message: string };
}

function manifestRows(dir: string): Row[] {
  return readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Row);
}

describe('what a job reads (embedded Temporal, real simulator)', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [200, 400], seed: 31 });
  let proxy: RecordingProxy;
  /** Every create body that reached the gateway, in order. */
  const creates: Buffer[] = [];
  /** Called with the body of each create as it arrives, before it is forwarded. */
  let onCreate: (index: number) => void = () => undefined;
  before(async () => {
    proxy = await recordingProxy(e2e.sim.urls[0]!, (req, body) => {
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/video/generations')) return;
      creates.push(body);
      onCreate(creates.length);
    });
  });
  after(() => proxy?.close());

  /** A user whose settings are their own: REELFLOW_CONFIG names keys.yaml in a fresh folder. */
  function userEnv(reads?: string[]): NodeJS.ProcessEnv {
    const config = tempDir('reelflow-config-');
    if (reads) writeFileSync(join(config, 'reads.yaml'), `allow_read:\n${reads.map((d) => `  - ${d}`).join('\n')}\n`);
    return { ...e2e.env, REELFLOW_CONFIG: join(config, 'keys.yaml') };
  }

  it('a job file that sets references.allow_outside is refused at its line; --allow-read or reads.yaml lets it run, and both commands list the file', async () => {
    const home = tempDir();
    const secrets = join(home, 'ssh');
    mkdirSync(secrets);
    const secret = join(secrets, 'id_ed25519');
    writeFileSync(secret, 'PRIVATE KEY OF THE USER\n');
    const dir = join(home, 'handed');
    mkdirSync(dir);
    const handed = join(dir, 'handed.yaml');
    writeFileSync(
      handed,
      jobText('handed-scope', proxy.url, [{ id: 'a', prompt: 'a handed job', image: secret }], 'references:\n  allow_outside: true'),
    );
    const env = userEnv();
    const sent = creates.length;
    for (const command of ['validate', 'run']) {
      const result = await runCli([command, handed], { env });
      assert.equal(result.code, 2, `${command}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, /handed\.yaml:17:\d+: .*allow_outside.*--allow-read/, `${command}: ${result.stderr}`);
    }
    assert.equal(creates.length, sent, 'nothing was sent');

    // The user's own decision: the same reference without the key, allowed from the command line.
    const shared = join(home, 'shared');
    mkdirSync(shared);
    const image = join(shared, 'ref.png');
    writeFileSync(image, PNG);
    const job = join(dir, 'allowed.yaml');
    writeFileSync(job, jobText('allowed-scope', proxy.url, [{ id: 'a', prompt: 'an allowed outside reference', image }]));
    const refused = await runCli(['validate', job], { env });
    assert.equal(refused.code, 2, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /allowed\.yaml:\d+:\d+: .*is outside the job file's folder.*--allow-read/);

    const validated = await runCli(['validate', job, '--allow-read', shared], { env });
    assert.equal(validated.code, 0, validated.stdout + validated.stderr);
    assert.ok(validated.stdout.includes(`reads ${image}, outside the job file's folder`), validated.stdout);
    const run = await runCli(['run', job, '--allow-read', shared], { env });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.ok(run.stderr.includes(`reads ${image}, outside the job file's folder`), run.stderr);
    assert.ok(creates.at(-1)!.includes(PNG.toString('base64')), 'the allowed reference was sent');

    // The user's settings allow it just as well, for every command.
    const listed = await runCli(['validate', job], { env: userEnv([shared]) });
    assert.equal(listed.code, 0, listed.stdout + listed.stderr);
    assert.ok(listed.stdout.includes(`reads ${image}, outside the job file's folder`), listed.stdout);
  });

  /**
   * Three items, one at a time: `a` and `b` send assets/ref.png, `c` none. `replace` runs when a's
   * create reaches the gateway (before it is forwarded): after the plan was read and hashed, before
   * b's create is made.
   */
  async function runWithReplacement(name: string, replace: (dir: string, ref: string) => void) {
    const dir = tempDir();
    mkdirSync(join(dir, 'assets'));
    const ref = join(dir, 'assets', 'ref.png');
    writeFileSync(ref, PNG);
    const job = join(dir, `${name}.yaml`);
    writeFileSync(
      job,
      jobText(name, proxy.url, [
        { id: 'a', prompt: `${name}: the first`, image: './assets/ref.png' },
        { id: 'b', prompt: `${name}: the second`, image: './assets/ref.png' },
        { id: 'c', prompt: `${name}: the third, without a reference` },
      ]),
    );
    const first = creates.length + 1;
    onCreate = (index) => {
      if (index === first) replace(dir, ref);
    };
    try {
      const result = await runCli(['run', job], { env: userEnv() });
      return { dir, ref, result, bodies: creates.slice(first - 1) };
    } finally {
      onCreate = () => undefined;
    }
  }

  it('a reference replaced by a link to a secret after the plan: the secret never reaches the gateway, the item fails naming the file', async () => {
    const secretDir = tempDir();
    const secret = join(secretDir, 'id_rsa');
    const secretText = '-----BEGIN OPENSSH PRIVATE KEY----- the user secret';
    writeFileSync(secret, secretText);
    const { dir, ref, result, bodies } = await runWithReplacement('swapped-link', (_dir, ref) => {
      renameSync(ref, `${ref}.old`);
      symlinkSync(secret, ref);
    });
    for (const body of bodies) {
      assert.ok(!body.includes(secretText), 'the secret as text');
      assert.ok(!body.includes(Buffer.from(secretText).toString('base64')), 'the secret inline');
    }
    assert.equal(bodies.length, 2, 'a and c were created, b was not');
    assert.equal(result.code, 1, result.stdout + result.stderr);
    const rows = manifestRows(dir);
    const b = rows.find((r) => r.key === 'b');
    assert.equal(b?.state, 'failed', JSON.stringify(rows));
    assert.equal(b?.error?.kind, 'reference_changed');
    assert.ok(b?.error?.message.includes(ref), b?.error?.message);
    assert.match(b!.error!.message, /symbolic link/);
    assert.equal(rows.find((r) => r.key === 'c')?.state, 'succeeded', 'the job went on');
    assert.ok(result.stdout.includes(ref), result.stdout);
  });

  it('a reference whose content changed after the plan: the item fails with a digest mismatch naming the file', async () => {
    const changed = Buffer.concat([PNG, Buffer.from('changed after the plan')]);
    const { dir, ref, result, bodies } = await runWithReplacement('replaced-file', (_dir, ref) => {
      writeFileSync(`${ref}.new`, changed);
      renameSync(`${ref}.new`, ref);
    });
    for (const body of bodies) assert.ok(!body.includes(changed.toString('base64')), 'the changed file was not sent');
    assert.equal(bodies.length, 2, 'a and c were created, b was not');
    assert.equal(result.code, 1, result.stdout + result.stderr);
    const b = manifestRows(dir).find((r) => r.key === 'b');
    assert.equal(b?.state, 'failed');
    assert.equal(b?.error?.kind, 'reference_changed');
    assert.ok(b?.error?.message.includes(ref), b?.error?.message);
    assert.match(b!.error!.message, /sha256/);
  });

  it("a fleet worker reads outside a job's folder only where its own user allowed it: the submitter's --allow-read alone widens nothing", async () => {
    const home = tempDir();
    const shared = join(home, 'shared');
    mkdirSync(shared);
    const image = join(shared, 'fleet-ref.png');
    const marked = Buffer.concat([PNG, Buffer.from('the fleet worker user file')]);
    writeFileSync(image, marked);
    const job = (name: string) => {
      const dir = join(home, name);
      mkdirSync(dir);
      const file = join(dir, `${name}.yaml`);
      writeFileSync(file, jobText(name, proxy.url, [{ id: 'a', prompt: `${name}: an outside reference`, image }]));
      return file;
    };
    const sent = creates.length;
    // A worker whose user allowed nothing outside: the submitter's allowance is not its user's.
    const worker = startCli(['worker'], { env: userEnv() });
    try {
      await worker.waitFor(/polling task queue/);
      const refused = await runCli(['run', job('fleet-not-allowed'), '--no-worker', '--allow-read', shared], { env: userEnv() });
      assert.notEqual(refused.code, 0, refused.stdout + refused.stderr);
      assert.match(refused.stdout + refused.stderr, /outside the job file's folder/);
      assert.equal(creates.length, sent, 'nothing was sent');
    } finally {
      worker.child.kill('SIGTERM');
      await worker.done;
    }
    // Its user allows the folder (--allow-read on the worker): the job the submitter allowed it for runs.
    const allowed = startCli(['worker', '--allow-read', shared], { env: userEnv() });
    try {
      await allowed.waitFor(/polling task queue/);
      const run = await runCli(['run', job('fleet-allowed'), '--no-worker', '--allow-read', shared], { env: userEnv() });
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.ok(creates.at(-1)!.includes(marked.toString('base64')), 'the allowed reference was sent');
    } finally {
      allowed.child.kill('SIGTERM');
      await allowed.done;
    }
  });
});
