// Failed renders are shown as charged or not as the gateway said, and estimated otherwise (issue
// 33, item 5): they counted as spend with no word on whether the gateway charged them. What a
// budget counts is unchanged (every one of them, conservatively). Pure logic.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stripVTControlCharacters } from 'node:util';
import { createChargeText, rowCostText, spendLines, spendOf } from '../../../client/spend';
import { renderFailures, spendLine } from '../../../review/report/header';
import { describeOutcome, type JobOutcome } from '../../../client/summary';
import type { PlanEstimate } from '../../../client/estimate';
import type { ManifestRow } from '../../../storage/manifest';
import { manifestRow } from '../../support/storage';

function row(key: string, extra: Partial<ManifestRow>): ManifestRow {
  return manifestRow(1, {
    key,
    id: key,
    model: 'seedance',
    prompt: key,
    task_id: `t-${key}`,
    base_url: null,
    finished_at: '2026-11-27T17:00:00.000Z',
    ...extra,
  });
}

const failure = { kind: 'render_failed', message: 'the gateway said the render failed' };
const charged = row('charged', { state: 'failed', error: failure, cost_usd: 0.4, cost_source: 'billed' });
const notCharged = row('free', { state: 'failed', error: failure, cost_usd: 0, cost_source: 'billed' });
const estimated = row('maybe', { state: 'unknown', error: failure, cost_usd: 0.25, cost_source: 'estimated' });
const unsent = row('unsent', { state: 'failed', error: { kind: 'create_not_sent', message: 'refused' } });
const ok = row('ok', { cost_usd: 0.25, cost_source: 'estimated' });
const rows = [ok, charged, notCharged, estimated, unsent];

const estimate: PlanEstimate = {
  currency: 'USD',
  total: 1.25,
  per_model: [{ model: 'seedance', role: 'video', items: 5, priced_items: 5, usd: 1.25, source: 'job file', assumed_seconds: {} }],
  unpriced_items: 0,
  unpriced_models: [],
};

describe("a failed render's cost, as the gateway said", () => {
  it('names a charge the gateway reported, one it reported as none, and an estimate', () => {
    assert.equal(createChargeText(charged), 'charged $0.40, as the gateway said');
    assert.equal(createChargeText(notCharged), 'not charged, as the gateway said');
    assert.equal(createChargeText(estimated), '$0.25 estimated: the gateway gave no charge to go by, it may have charged');
    assert.equal(createChargeText(unsent), undefined);
  });

  it('the spend still counts every one of them, and says which part the failures are', () => {
    const spend = spendOf(rows, estimate)!;
    // Money safety first: nothing a failure may have cost leaves the total.
    assert.equal(spend.spent_usd, 0.9);
    assert.deepEqual(spendLines(spend), [
      'spent:    $0.90 ($0.40 billed, $0.50 estimated) of $1.25 estimated',
      '  seedance: $0.90 ($0.40 billed, $0.50 estimated) of $1.25 estimated',
      '  of which 3 renders that did not succeed: 1 charged $0.40, as the gateway said; 1 not charged, as the gateway said; ' +
        '1 estimated at $0.25 (the gateway gave no charge to go by)',
    ]);
  });

  it('each failure in the summary says what it cost', () => {
    const outcome: JobOutcome = {
      job: 'campaign',
      items: 5,
      location: '/tmp/out',
      counts: { succeeded: 1, failed: 3, timed_out: 0, canceled: 0, unknown: 1, not_rendered: 0 },
      bytes: 0,
      rows,
      missing: [],
      changed: [],
    };
    const lines = describeOutcome(outcome, 'job.yaml').map((l) => stripVTControlCharacters(l));
    const of = (key: string) => lines.find((l) => l.includes(` ${key} `)) ?? '';
    assert.match(of('charged'), /\(charged \$0\.40, as the gateway said\)$/);
    assert.match(of('free'), /\(not charged, as the gateway said\)$/);
    assert.match(of('maybe'), /\(\$0\.25 estimated: the gateway gave no charge to go by, it may have charged\)$/);
    assert.match(of('unsent'), /refused$/);
  });

  it("results' COST cell says a render the gateway did not charge was not charged, not '$0.00 billed'", () => {
    assert.equal(rowCostText(notCharged), 'not charged');
    assert.equal(rowCostText(charged), '$0.40 billed');
    assert.equal(rowCostText(estimated), '$0.25 est.');
    // A rewrite paid for a render the gateway did not charge: the cell is the rewrite's, named by it.
    assert.equal(rowCostText({ ...notCharged, rewrite_cost_usd: 0.0002, rewrite_cost_source: 'usage' }), '$0.0002 usage');
  });

  it("the review page's header and failure list say which failed renders were charged", () => {
    const header = spendLine(spendOf(rows, estimate));
    assert.match(
      header,
      /3 did not succeed: 1 charged \$0\.40, as the gateway said; 1 not charged, as the gateway said; 1 estimated at \$0\.25 \(the gateway gave no charge to go by\)/,
    );
    const list = renderFailures(rows);
    const entry = (key: string) => list.split('<li ').find((li) => li.includes(`data-key="${key}"`)) ?? '';
    assert.match(entry('charged'), /charged \$0\.40, as the gateway said/);
    assert.match(entry('free'), /not charged, as the gateway said/);
    assert.match(entry('maybe'), /\$0\.25 estimated/);
    assert.doesNotMatch(entry('unsent'), /charged|estimated/);
  });
});
