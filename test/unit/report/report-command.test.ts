// `reelflow report` wiring: output, --json, and exit 2 with one line when the job cannot be resolved.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { registerReportCommand } from '../../../cli/commands/report';
import type { ManifestRow } from '../../../storage/manifest/row';
import { UsageError } from '../../../cli/errors';

const failed: ManifestRow = {
  key: 'k1',
  id: 'a',
  index: 1,
  state: 'failed',
  model: 'm',
  protocol: 'general',
  prompt: 'p',
  task_id: null,
  base_url: null,
  created_at: null,
  finished_at: '2025-01-01T00:00:00Z',
  polls: 0,
  file: null,
  bytes: null,
  sha256: null,
  error: { kind: 'x', message: 'y' },
};

async function runCli(args: string[], resolveOutput: (target: string) => Promise<{ job: string; outputDir: string; rows: ManifestRow[] }>) {
  const program = new Command('reelflow').exitOverride();
  let stderr = '';
  let stdout = '';
  program.configureOutput({
    writeErr: (s) => {
      stderr += s;
    },
    writeOut: (s) => {
      stdout += s;
    },
  });
  registerReportCommand(program, { resolveOutput });
  const realWrite = process.stdout.write.bind(process.stdout);
  const realErr = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string) => {
    stdout += chunk;
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => {
    stderr += chunk;
    return true;
  }) as typeof process.stderr.write;
  let exitCode = 0;
  try {
    await program.parseAsync(['report', ...args], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    exitCode = error.exitCode;
  } finally {
    process.stdout.write = realWrite;
    process.stderr.write = realErr;
  }
  return { exitCode, stdout, stderr };
}

void describe('reelflow report', () => {
  void it('prints the path, or {"path","items","posters"} with --json', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'reelflow-report-cmd-'));
    try {
      const resolve = async (target: string) => {
        assert.equal(target, 'jobs/demo.yaml');
        return { job: 'demo', outputDir: dir, rows: [failed] };
      };
      const plain = await runCli(['jobs/demo.yaml'], resolve);
      assert.equal(plain.exitCode, 0);
      assert.equal(plain.stdout, `${join(dir, 'report.html')}\n`);
      const json = await runCli(['jobs/demo.yaml', '--json'], resolve);
      assert.deepEqual(JSON.parse(json.stdout), { path: join(dir, 'report.html'), items: 1, posters: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it('exits 2 with one clear line when the job cannot be resolved', async () => {
    const result = await runCli(['nope.yaml'], async () => {
      throw new UsageError('nope.yaml: no such job file\n  at somewhere');
    });
    assert.equal(result.exitCode, 2);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr, 'reelflow: nope.yaml: no such job file\n');
  });
});
