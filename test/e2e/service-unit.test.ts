// deploy/reelflow-worker.service as systemd reads it: `systemd-analyze verify` finds nothing to
// complain about, and the settings docs/deploy.md relies on (the key from an EnvironmentFile, a
// SIGTERM drain that outlasts the worker's shutdown grace, restarts) are there.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../support/jobs';

const unitPath = join(__dirname, '..', '..', 'deploy', 'reelflow-worker.service');

/** systemd-analyze verify's complaints (it exits 0 for settings it ignores, so stderr is the verdict). */
function verify(text: string): { status: number | null; complaints: string } {
  const dir = tempDir('reelflow-unit-');
  try {
    const file = join(dir, 'reelflow-worker.service');
    writeFileSync(file, text);
    const result = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.error, undefined, 'systemd-analyze runs');
    return { status: result.status, complaints: result.stderr.trim() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function setting(text: string, name: string): string | undefined {
  return new RegExp(`^${name}=(.*)$`, 'm').exec(text)?.[1];
}

describe('deploy/reelflow-worker.service', () => {
  const unit = readFileSync(unitPath, 'utf8');

  it('passes systemd-analyze verify without a complaint', () => {
    const result = verify(unit);
    assert.equal(result.status, 0);
    assert.equal(result.complaints, '');
  });

  it('the check itself sees a broken unit (a misspelt signal and restart rule)', () => {
    const broken = unit.replace('KillSignal=SIGTERM', 'KillSignal=SIGFOO').replace('Restart=on-failure', 'Restart=sometimes');
    const result = verify(broken);
    assert.match(result.complaints, /SIGFOO/);
    assert.match(result.complaints, /sometimes/);
  });

  it('takes the key from an EnvironmentFile, drains on SIGTERM for longer than the shutdown grace, restarts', () => {
    assert.equal(setting(unit, 'EnvironmentFile'), '/etc/reelflow/worker.env');
    assert.doesNotMatch(unit, /^Environment=.*(KEY|TOKEN)/m, 'no key in the unit itself');
    assert.equal(setting(unit, 'KillSignal'), 'SIGTERM');
    assert.equal(setting(unit, 'Restart'), 'on-failure');
    assert.match(setting(unit, 'ExecStart') ?? '', /reelflow worker/);
    const grace = / --shutdown-grace (\d+)s(?: |$)/.exec(setting(unit, 'ExecStart') ?? '');
    assert.ok(grace, 'the unit gives the worker its shutdown grace, in seconds');
    const stop = /^(\d+)s$/.exec(setting(unit, 'TimeoutStopSec') ?? '');
    assert.ok(stop, 'TimeoutStopSec in seconds');
    // The grace, then closing the connections and the last activity completions: 10 s to spare.
    assert.ok(Number(stop[1]) >= Number(grace[1]) + 10, `TimeoutStopSec ${stop[1]} s outlasts the grace of ${grace[1]} s`);
  });
});
