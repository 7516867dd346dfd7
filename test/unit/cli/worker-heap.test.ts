// Which command lines run a worker in their own process, read before the program loads
// (cli/worker-heap.ts commandRunsAWorker): those restart with their memory bounded, the others never.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commandRunsAWorker } from '../../../cli/worker-heap';

const argv = (...args: string[]) => ['/usr/bin/node', '/opt/reelflow/bin/reelflow.js', ...args];

describe('commandRunsAWorker', () => {
  it('is true for a worker and for a run that carries its own job', () => {
    assert.equal(commandRunsAWorker(argv('worker')), true);
    assert.equal(commandRunsAWorker(argv('worker', '--metrics', '127.0.0.1:9464')), true);
    assert.equal(commandRunsAWorker(argv('run', 'jobs/demo.yaml')), true);
    assert.equal(commandRunsAWorker(argv('run', 'jobs/demo.yaml', '--retry-failed', '--json')), true);
    // Global options before the command, one of them with a value that looks like a command.
    assert.equal(commandRunsAWorker(argv('--verbose', '--log-level', 'run', 'run', 'job.yaml')), true);
  });

  it('is false where no worker runs in the process', () => {
    for (const flag of ['--detach', '--dry-run', '--no-worker', '--enhance-only', '--help', '-h'])
      assert.equal(commandRunsAWorker(argv('run', 'job.yaml', flag)), false, flag);
    assert.equal(commandRunsAWorker(argv('worker', '--help')), false);
    for (const command of ['validate', 'status', 'results', 'review', 'schedule', 'sim', 'server'])
      assert.equal(commandRunsAWorker(argv(command, 'job.yaml')), false, command);
    assert.equal(commandRunsAWorker(argv('--version')), false);
    assert.equal(commandRunsAWorker(argv()), false);
    // A job file called "run" given to another command is not the run command.
    assert.equal(commandRunsAWorker(argv('validate', 'run')), false);
  });

  it('reads flags only before a `--`', () => {
    assert.equal(commandRunsAWorker(argv('run', 'job.yaml', '--', '--detach')), true);
  });
});
