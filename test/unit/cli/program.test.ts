// The program loads only the command a command line names (cli/program.ts): every command is still
// there when named and in help, and a command that needs no server never loads the Temporal client.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildProgram } from '../../../cli/program';

const ROOT = join(__dirname, '..', '..', '..');
const ALL = [
  'validate',
  'run',
  'enhance',
  'status',
  'results',
  'cancel',
  'report',
  'review',
  'schedule',
  'notify',
  'worker',
  'doctor',
  'server',
  'sim',
  'completion',
];
const argv = (...args: string[]) => ['node', 'reelflow', ...args];
const names = (args: string[]) => buildProgram(argv(...args)).commands.map((c) => c.name());

/** The modules `reelflow ARGS` has loaded once its program is built, in a fresh process. */
function loadedBy(args: string[]): string[] {
  const script = `const { buildProgram } = require('./cli/program'); buildProgram(${JSON.stringify(argv(...args))});
    process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  return JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8' })) as string[];
}

describe('the program', () => {
  it('has every command for help, an unknown word and completion, in the order help lists them', () => {
    assert.deepEqual(names([]), ALL);
    assert.deepEqual(names(['--help']), ALL);
    assert.deepEqual(names(['stauts']), ALL);
    assert.deepEqual(names(['completion', 'bash']), ALL);
  });

  it('registers only the command named, with the others of its module', () => {
    assert.deepEqual(names(['validate', 'job.yaml']), ['validate']);
    assert.deepEqual(names(['--verbose', 'run', 'job.yaml']), ['run']);
    assert.deepEqual(names(['results', 'job.yaml']), ['status', 'results', 'cancel']);
    assert.deepEqual(names(['schedule', 'list']), ['schedule']);
    assert.deepEqual(names(['--version']), []);
  });

  it('run --help says which of --retry-failed and --redo failed to use, each beside the other (issue 33)', () => {
    const run = buildProgram(argv('run', 'job.yaml')).commands.find((c) => c.name() === 'run');
    const help = (run?.helpInformation() ?? '').replace(/\s+/g, ' ');
    assert.match(
      help,
      /--retry-failed with the rest of the job, render the items .* again as they were \(same key, name and seed\); --redo failed instead makes a new take/,
    );
    assert.match(
      help,
      /--redo <which> rejected \| failed: .* --retry-failed instead renders failed items again as they were, with the rest of the job/,
    );
  });

  it('does not load the Temporal client for validate, nor the job file schema for --version', () => {
    const validate = loadedBy(['validate', 'jobs/demo.yaml']);
    assert.ok(
      validate.some((m) => m.includes('jobfile')),
      'validate loads the job file code',
    );
    assert.ok(!validate.some((m) => m.includes('@temporalio/client')), 'validate does not load @temporalio/client');
    const version = loadedBy(['--version']);
    assert.ok(
      !version.some((m) => m.includes('jobfile/schema') || m.includes('@temporalio/client')),
      version.filter((m) => !m.includes('node_modules')).join('\n'),
    );
  });
});
