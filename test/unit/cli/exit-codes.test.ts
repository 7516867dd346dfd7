// One table of exit codes: the one in docs/commands.md is read here and compared
// with cli/errors.ts, with what each error class ends with, and with every exit status written
// as a number in the command's code.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CommanderError } from 'commander';
import { EXIT_CODES, exitCodeFor, InfrastructureError, NeverRunError, UsageError } from '../../../cli/errors';
import { JOB_WIDE_CAUSES } from '../../../activities/failure-types';
import { TemporalUnavailableError } from '../../../worker/errors';

const ROOT = join(__dirname, '..', '..', '..');

/** The rows of the table under "## Exit codes" in docs/commands.md: code -> meaning. */
function documented(): Map<number, string> {
  const text = readFileSync(join(ROOT, 'docs', 'commands.md'), 'utf8');
  const section = text.split(/^## /m).find((s) => s.startsWith('Exit codes'));
  assert.ok(section, 'docs/commands.md has a section "## Exit codes"');
  const rows = new Map<number, string>();
  for (const m of section.matchAll(/^\|\s*(\d+)\s*\|\s*(.+?)\s*\|\s*$/gm)) rows.set(Number(m[1]), m[2]!);
  return rows;
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(ROOT, dir, f));
}

describe('exit codes', () => {
  it('docs/commands.md lists exactly the codes of cli/errors.ts EXIT_CODES', () => {
    assert.deepEqual(
      [...documented().keys()].sort((a, b) => a - b),
      Object.values(EXIT_CODES).sort((a, b) => a - b),
    );
  });

  it('each error class ends with the code its row describes', () => {
    const rows = documented();
    assert.match(rows.get(exitCodeFor(new UsageError('x')))!, /bad usage/);
    assert.match(rows.get(exitCodeFor(new InfrastructureError('x')))!, /unreachable/);
    assert.match(rows.get(exitCodeFor(new TemporalUnavailableError('x')))!, /Temporal/);
    assert.match(rows.get(exitCodeFor(new NeverRunError('j', 'j.yaml')))!, /never run/);
    assert.match(rows.get(exitCodeFor(new CommanderError(1, 'commander.unknownCommand', 'x')))!, /bad usage/);
    assert.equal(exitCodeFor(new CommanderError(0, 'commander.helpDisplayed', 'x')), 0);
    assert.match(rows.get(exitCodeFor(new Error('anything else')))!, /did not succeed/);
  });

  it('a command that ends through commander with a code of its own keeps that code (report: storage unwritable is 3)', () => {
    assert.equal(exitCodeFor(new CommanderError(3, 'reelflow.report.storage', 'x')), 3);
    assert.equal(exitCodeFor(new CommanderError(2, 'reelflow.report.link', 'x')), 2);
  });

  it('every exit status written as a number in cli/, client/, review/ and the job-wide causes is in the table', () => {
    const rows = documented();
    const found = new Set<number>(Object.values(JOB_WIDE_CAUSES).map((c) => c.exitCode));
    for (const file of ['cli', 'client', 'review'].flatMap((folder) => sources(folder))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/process\.exit\((\d+)\)|exitCode\s*(?::|=)\s*(\d+)/g)) found.add(Number(m[1] ?? m[2]));
    }
    for (const code of found) assert.ok(rows.has(code), `exit ${code} is used but not in docs/commands.md`);
  });
});
