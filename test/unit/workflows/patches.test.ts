// The patch ledger matches the code: every id it lists is asked somewhere in workflows/ (an id no
// code asks is retired: delete it, per ARCHITECTURE.md), and every entry says when and what.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PATCHES } from '../../../workflows/patches';

const WORKFLOWS = join(__dirname, '..', '..', '..', 'workflows');

function workflowSource(): string {
  return readdirSync(WORKFLOWS)
    .filter((f) => f.endsWith('.ts') && f !== 'patches.ts')
    .map((f) => readFileSync(join(WORKFLOWS, f), 'utf8'))
    .join('\n');
}

describe('workflows/patches.ts', () => {
  it('lists only patches the workflow code still asks', () => {
    const source = workflowSource();
    const unused = Object.keys(PATCHES).filter((id) => !source.includes(`'${id}'`));
    assert.deepEqual(unused, [], 'ids in the ledger that no workflow asks');
  });

  it('gives each patch a release day and what it changed', () => {
    for (const [id, patch] of Object.entries(PATCHES)) {
      assert.match(patch.since, /^\d{4}-\d{2}-\d{2}$/, id);
      assert.ok(patch.changed.length > 20, id);
    }
  });
});
