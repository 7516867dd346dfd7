// A job planned before takes existed keeps its plan digest (activities/plan.ts planDigest): a job
// running through an upgrade must not be told its job file changed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planDigest } from '../../../activities/plan';
import { HEAD, plan } from '../jobfile/helpers';

describe('plan digest across the takes change', () => {
  it('an item without an id under a matrix (which now has a group) digests as its plan did without groups', async () => {
    const p = await plan(
      `${HEAD}matrix:\n  ratio: ["16:9", "9:16"]\nitems:\n  - prompt: a blue hat\n  - id: shoe\n    prompt: a red shoe\n`,
    );
    assert.ok(
      p.items.some((item) => item.group !== undefined),
      'the plan has groups',
    );
    const before = { ...p, items: p.items.map(({ group: _group, ...item }) => item) };
    assert.equal(planDigest(p), planDigest(before));
  });
});
