// A run's end summary says this run's spend and the job's apart (docs/costs.md): after `run
// --redo` the summary read "spent: $10.00 of $1.02 estimated", the job's whole spend beside this
// run's estimate. This run's rows are those that ended at or after its job's start (JobResult
// startedAt, the workflow's clock, the rows' own). Pure logic.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stripVTControlCharacters } from 'node:util';
import { spendLines, spendOf, spendSince } from '../../../client/spend';
import { describeOutcome, type JobOutcome } from '../../../client/summary';
import type { PlanItem } from '../../../jobfile/plan';
import type { PriceTable } from '../../../jobfile/prices';
import type { ManifestRow } from '../../../storage/manifest';
import { estimatePlan } from '../../../client/estimate';
import { manifestRow } from '../../support/storage';

const RUN_START = Date.UTC(2026, 10, 27, 18, 0);
const at = (minute: number) => new Date(Date.UTC(2026, 10, 27, 17, minute)).toISOString();

function row(key: string, finishedAt: string, extra: Partial<ManifestRow> = {}): ManifestRow {
  return manifestRow(1, {
    key,
    id: key,
    model: 'seedance',
    prompt: key,
    task_id: `t-${key}-${finishedAt}`,
    base_url: null,
    finished_at: finishedAt,
    ...extra,
  });
}

function item(key: string): PlanItem {
  return { key, index: 1, outputName: key, request: { model: 'seedance', protocol: 'general', prompt: key, references: [] } };
}

const pricing: PriceTable = { seedance: { source: 'job file', perVideo: 1.02 } };
// Ten earlier renders at $0.90 each ($9.00), then a redo run of one take that cost $1.00, billed.
const earlier = Array.from({ length: 10 }, (_, i) => row(`k${i}`, at(i), { cost_usd: 0.9, cost_source: 'billed' }));
const redoRow = row('k3~take2', new Date(RUN_START + 60_000).toISOString(), { cost_usd: 1, cost_source: 'billed' });
const everyRow = [...earlier, redoRow];
const redoPlan = { items: [item('k3~take2')], pricing };

describe("a run's spend apart from the job's", () => {
  it('counts only the rows that ended after the run started, beside the estimate of what this run sent', () => {
    const run = spendSince(redoPlan, everyRow, [], RUN_START);
    assert.equal(run?.spent_usd, 1);
    assert.equal(run?.estimate_usd, 1.02);
  });

  it('counts the paid rewrite calls no row counts by their time too', () => {
    const calls = [
      { key: 'k1', at: at(5), by: 'enhance' as const, cost_usd: 0.5, cost_source: 'estimated' as const },
      {
        key: 'k3~take2',
        at: new Date(RUN_START + 1000).toISOString(),
        by: 'render' as const,
        cost_usd: 0.25,
        cost_source: 'usage' as const,
      },
    ];
    const plan = { ...redoPlan, enhance: { model: 'seedance', maxTokens: 10 } };
    assert.equal(spendSince(plan, everyRow, calls, RUN_START)?.spent_usd, 1.25);
  });

  it('is nothing apart when the run is the whole job (nothing was paid before it)', () => {
    assert.equal(spendSince(redoPlan, [redoRow], [], RUN_START), undefined);
  });

  it('prices a plain re-run at the items it rendered or left to render, not the ones an earlier run had done', () => {
    const plan = { items: [...earlier.map((r) => item(r.key)), item('new')], pricing };
    const edited = row('k2', new Date(RUN_START + 5000).toISOString(), { cost_usd: 1.02, cost_source: 'estimated' });
    const run = spendSince(plan, [...earlier, edited], [], RUN_START);
    // k2 rendered again, `new` not rendered yet (a budget stop): 2 x $1.02.
    assert.equal(run?.estimate_usd, 2.04);
    assert.equal(run?.spent_usd, 1.02);
  });

  it("the summary says this run's spend of its estimate and the job's apart, never the job's beside this run's estimate", () => {
    const outcome: JobOutcome = {
      job: 'campaign',
      items: 1,
      location: '/tmp/out',
      counts: { succeeded: 1, failed: 0, timed_out: 0, canceled: 0, unknown: 0, not_rendered: 0 },
      bytes: 0,
      rows: [redoRow],
      missing: [],
      changed: [],
      spend: spendOf(everyRow, estimatePlan(redoPlan))!,
      runSpend: spendSince(redoPlan, everyRow, [], RUN_START)!,
    };
    const lines = describeOutcome(outcome, 'job.yaml').map((l) => stripVTControlCharacters(l));
    assert.ok(!lines.some((l) => l.includes('$10.00') && l.includes('of $1.02 estimated')), lines.join('\n'));
    assert.ok(lines.includes('this run: $1.00 ($1.00 billed, $0.00 estimated) of $1.02 estimated'), lines.join('\n'));
    assert.ok(lines.includes('the job:  $10.00 ($10.00 billed, $0.00 estimated), every run of its items'), lines.join('\n'));
  });

  it('keeps the single-run summary as it was when this run is the whole job', () => {
    const spend = spendOf([redoRow], estimatePlan(redoPlan))!;
    assert.deepEqual(spendLines(spend), [
      'spent:    $1.00 ($1.00 billed, $0.00 estimated) of $1.02 estimated',
      '  seedance: $1.00 ($1.00 billed, $0.00 estimated) of $1.02 estimated',
    ]);
  });
});
