// The worker's log: every line redacted and still one JSON object; `--log-format json` writes
// them to stdout and leaves no log file, the default writes the file and nothing to stdout.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { registerSecret, unregisterSecret } from '../../../gateway/redact';
import { redactedLine } from '../../../worker/log';
import { tempDir } from '../../support/jobs';

const KEY = 'sk-unit-log-0123456789abcdef';

/** Runs a child that logs lines carrying the key in every way a caller could, with `format`. */
function logInChild(format: 'file' | 'json'): { stdout: string; stderr: string; stateDir: string } {
  const dir = tempDir('reelflow-log-');
  const script = join(dir, 'child.ts');
  const root = join(__dirname, '..', '..', '..');
  writeFileSync(
    script,
    [
      `import { registerSecret } from ${JSON.stringify(join(root, 'gateway', 'redact'))};`,
      `import { configureLog, log } from ${JSON.stringify(join(root, 'worker', 'log'))};`,
      `const key = ${JSON.stringify(KEY)};`,
      'registerSecret(key);',
      `configureLog({ format: ${JSON.stringify(format)} });`,
      'log.info({ headers: { authorization: `Bearer ${key}` }, nested: { apiKey: key, note: `with ${key}` } }, `calling with ${key}`);',
      'log.warn(`api_key=\\"${key}\\" in a quoted header`);',
      // Redacting this field's serialised text broke its JSON, and the log call threw.
      'log.info({ note: `api_key="${key}"` }, "a field with a quoted key");',
      'log.error(new Error(`failed: ${key}`));',
      'log.info({ component: "plain" }, "a line with nothing to redact");',
    ].join('\n'),
  );
  const child = spawnSync(process.execPath, ['--import', 'tsx', script], {
    cwd: root,
    env: { ...process.env, REELFLOW_STATE_DIR: join(dir, 'state'), REELFLOW_VERBOSE: '' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(child.status, 0, child.stderr);
  return { stdout: child.stdout, stderr: child.stderr, stateDir: join(dir, 'state') };
}

describe('worker log', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('redacts a line and keeps it one JSON object, even where text redaction would cut an escape', () => {
    registerSecret(KEY);
    try {
      const line = `${JSON.stringify({ level: 30, msg: `api_key="${KEY}" and Bearer ${KEY}`, n: 1 })}\n`;
      const out = redactedLine(line);
      assert.ok(!out.includes(KEY), out);
      assert.ok(out.endsWith('\n'));
      const parsed = JSON.parse(out) as { msg: string; n: number };
      assert.equal(parsed.n, 1);
      assert.match(parsed.msg, /\[REDACTED\]/);
      // Text redaction alone would break this line's JSON (it cuts `\"` in half).
      assert.throws(() => JSON.parse(line.replace(/(api[-_]?key["']?\s*[:=]\s*["']?\s*)[^\s"',;}]+/gi, '$1[REDACTED]')));
      const clean = `${JSON.stringify({ level: 30, msg: 'nothing to hide' })}\n`;
      assert.equal(redactedLine(clean), clean);
    } finally {
      unregisterSecret(KEY);
    }
  });

  it('--log-format json: one JSON object per line on stdout, no key, no log file', () => {
    const { stdout, stateDir } = logInChild('json');
    dirs.push(join(stateDir, '..'));
    const lines = stdout.trimEnd().split('\n');
    assert.equal(lines.length, 5, stdout);
    const parsed = lines.map((l) => JSON.parse(l) as { level: number; msg: string; pid: number });
    assert.deepEqual(
      parsed.map((p) => p.level),
      [30, 40, 30, 50, 30],
    );
    assert.equal(parsed[4]!.msg, 'a line with nothing to redact');
    assert.ok(!stdout.includes(KEY), stdout);
    assert.ok(!existsSync(join(stateDir, 'logs', 'reelflow.log')), 'no log file in json mode');
  });

  it('default: the same lines in the state directory log file, redacted, and nothing on stdout', () => {
    const { stdout, stateDir } = logInChild('file');
    dirs.push(join(stateDir, '..'));
    assert.equal(stdout, '');
    const text = readFileSync(join(stateDir, 'logs', 'reelflow.log'), 'utf8');
    assert.equal(text.trimEnd().split('\n').length, 5, text);
    for (const line of text.trimEnd().split('\n')) JSON.parse(line);
    assert.ok(!text.includes(KEY), text);
  });
});
