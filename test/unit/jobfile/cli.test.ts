// `reelflow validate`: summary, --json shape, errors on stderr, exit status.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { registerValidateCommand, runValidate } from '../../../cli/commands/validate';
import { HEAD, tempJobDir } from './helpers';

function capture() {
  const out = { stdout: '', stderr: '', stdoutIsTTY: false };
  return {
    out,
    io: {
      stdout: (t: string) => {
        out.stdout += t;
      },
      stderr: (t: string) => {
        out.stderr += t;
      },
      stdoutIsTTY: false,
    },
  };
}

const JOBS = join(__dirname, '..', '..', '..', 'jobs');

describe('reelflow validate', () => {
  it('prints a summary: items per model and protocol, output, schedule', async () => {
    const { out, io } = capture();
    const code = await runValidate(join(JOBS, 'openai-protocol.yaml'), {}, io);
    assert.equal(code, 0);
    assert.match(out.stdout, /^openai-protocol: valid, 3 items$/m);
    assert.match(out.stdout, /1 {2}seedance-1-0-pro-250528 \(general protocol\)/);
    assert.match(out.stdout, /2 {2}veo-3.1-fast-generate-001 \(openai protocol\)/);
    assert.match(out.stdout, /^output: {3}.*out\/openai-protocol$/m);
    assert.match(out.stdout, /^schedule: none$/m);
    assert.equal(out.stderr, '');
  });

  it('shows the schedule in words', async () => {
    const { out, io } = capture();
    assert.equal(await runValidate(join(JOBS, 'scheduled.yaml'), {}, io), 0);
    assert.match(out.stdout, /^schedule: at 03:00 every day \(Europe\/Berlin\) \(overlap: skip\)$/m);
  });

  it('--json prints the documented shape on stdout', async () => {
    const { out, io } = capture();
    assert.equal(await runValidate(join(JOBS, 'demo.yaml'), { json: true, date: '2025-01-01' }, io), 0);
    const doc = JSON.parse(out.stdout) as { ok: boolean; job: string; items: Record<string, unknown>[]; errors: unknown[] };
    assert.equal(doc.ok, true);
    assert.equal(doc.job, 'demo');
    assert.deepEqual(doc.errors, []);
    assert.deepEqual(Object.keys(doc.items[0] ?? {}), ['key', 'id', 'index', 'model', 'protocol', 'prompt', 'output']);
    assert.deepEqual(
      { ...doc.items[0], output: undefined },
      {
        key: 'harbor-dawn',
        id: 'harbor-dawn',
        index: 1,
        model: 'seedance-1-0-pro-250528',
        protocol: 'general',
        prompt: 'A slow aerial drift over a quiet harbor at dawn, fishing boats leaving their moorings',
        output: undefined,
      },
    );
    assert.match(String(doc.items[0]?.output), /out\/demo\/001-harbor-dawn$/);
  });

  it('an invalid file: errors one per line on stderr, --json errors, exit 2', async () => {
    const dir = tempJobDir({ 'bad.yaml': `${HEAD}items:\n  - promt: hi\n    seconds: five\n` });
    const file = join(dir, 'bad.yaml');
    const { out, io } = capture();
    assert.equal(await runValidate(file, { json: true }, io), 2);
    const doc = JSON.parse(out.stdout) as { ok: boolean; job: string; errors: unknown[] };
    assert.equal(doc.ok, false);
    assert.equal(doc.job, 't');
    assert.deepEqual(doc.errors, [
      { file, line: 7, column: 5, path: 'items[0].promt', message: "items[0].promt: unknown key 'promt', did you mean 'prompt'?" },
      {
        file,
        line: 8,
        column: 14,
        path: 'items[0].seconds',
        message: 'items[0].seconds must be a string of digits such as "5", got "five"',
      },
    ]);
    const lines = out.stderr.trim().split('\n');
    assert.deepEqual(lines.slice(0, 2), [
      `${file}:7:5: items[0].promt: unknown key 'promt', did you mean 'prompt'?`,
      `${file}:8:14: items[0].seconds must be a string of digits such as "5", got "five"`,
    ]);
  });

  it('a missing file: one clear line, exit 2', async () => {
    const { out, io } = capture();
    assert.equal(await runValidate('/nonexistent/job.yaml', {}, io), 2);
    assert.equal(out.stdout, '');
    assert.equal(out.stderr, 'reelflow: /nonexistent/job.yaml: cannot read the job file: no such file\n');
  });

  it('registers on a commander program and sets process.exitCode', async () => {
    const program = new Command('reelflow').exitOverride();
    registerValidateCommand(program);
    const saved = process.exitCode;
    const write = process.stdout.write.bind(process.stdout);
    let printed = '';
    process.stdout.write = ((chunk: string) => {
      printed += chunk;
      return true;
    }) as typeof process.stdout.write;
    try {
      await program.parseAsync(['node', 'reelflow', 'validate', join(JOBS, 'matrix.yaml')]);
      assert.equal(process.exitCode, 0);
    } finally {
      process.stdout.write = write;
      process.exitCode = saved;
    }
    assert.match(printed, /matrix: valid, 8 items/);
  });

  it('refuses what run refuses: a budget with a model that has no price (exit 2, the model named), as text and --json', async () => {
    const budgeted = `${HEAD}budget:\n  max_usd: 20\nitems:\n  - prompt: a shoe\n`;
    const dir = tempJobDir({
      'unpriced.yaml': budgeted,
      'priced.yaml': `${budgeted}pricing:\n  seedance-1-0-pro-250528:\n    per_video: 0.25\n`,
    });
    const text = capture();
    assert.equal(await runValidate(join(dir, 'unpriced.yaml'), {}, text.io), 2);
    assert.doesNotMatch(text.out.stdout, /valid/);
    // The plan and estimate still show which model has no price.
    assert.match(text.out.stdout, /^t: refused \(below\), 1 item$/m);
    assert.match(text.out.stdout, /^estimate: none, no prices for seedance-1-0-pro-250528/m);
    assert.match(
      text.out.stderr,
      /run refuses this job: a budget is set and these models have no price: seedance-1-0-pro-250528 \(no price/,
    );
    assert.match(text.out.stderr, /run JOB --dry-run/);
    const json = capture();
    assert.equal(await runValidate(join(dir, 'unpriced.yaml'), { json: true }, json.io), 2);
    const doc = JSON.parse(json.out.stdout) as { ok: boolean; errors: Array<{ path: string; message: string }> };
    assert.equal(doc.ok, false);
    assert.equal(doc.errors[0]?.path, 'budget');
    const priced = capture();
    assert.equal(await runValidate(join(dir, 'priced.yaml'), {}, priced.io), 0, priced.out.stderr);
    assert.match(priced.out.stdout, /t: valid, 1 item/);
  });
});
