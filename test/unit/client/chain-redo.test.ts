// A redo of shot 2 of a chain of six: shots 3-6 start from a different frame (through each other),
// an `after:` dependent does not, and the cost of rendering them again is their estimates' sum.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeChangedStarts, startsChangedByRedo } from '../../../client/chain-redo';
import type { PlanItem } from '../../../jobfile/plan';

const shot = (n: number, need?: { key: string; use: 'last_frame' | 'after' }): PlanItem => ({
  key: `shot-${n}`,
  index: n,
  outputName: `shot-${n}`,
  request: { model: 'm', protocol: 'general', prompt: `shot ${n}`, references: [] },
  ...(need ? { needs: [need] } : {}),
});

const chain = [1, 2, 3, 4, 5, 6].map((n) => shot(n, n > 1 ? { key: `shot-${n - 1}`, use: 'last_frame' } : undefined));
const prices = { m: { perVideo: 0.3, source: 'job file' } };

describe('startsChangedByRedo', () => {
  it('a redo of shot 2 changes the start of 3-6, each from shot-2, priced', () => {
    const changed = startsChangedByRedo(chain, ['shot-2'], prices);
    assert.deepEqual(
      changed.shots.map((s) => [s.key, s.from]),
      [
        ['shot-3', 'shot-2'],
        ['shot-4', 'shot-2'],
        ['shot-5', 'shot-2'],
        ['shot-6', 'shot-2'],
      ],
    );
    assert.equal(changed.usd, 1.2);
    assert.match(
      describeChangedStarts(changed)[0]!,
      /4 later shot\(s\) now start from a different frame: shot-3, shot-4, shot-5, shot-6 \(about \$1\.20/,
    );
  });

  it('after: passes nothing, and a redo of the last shot changes nothing', () => {
    const ordered = [shot(1), shot(2, { key: 'shot-1', use: 'after' })];
    assert.deepEqual(startsChangedByRedo(ordered, ['shot-1'], prices).shots, []);
    assert.deepEqual(describeChangedStarts(startsChangedByRedo(chain, ['shot-6'], prices)), []);
  });

  it('an unpriced model leaves the cost out', () => {
    assert.equal(startsChangedByRedo(chain, ['shot-5'], {}).usd, undefined);
  });
});
