// budget.max_usd (docs/costs.md): the job workflow reserves an item's estimate before it starts the
// item's workflow, so however wide the window, the creates never cross the budget. A create that
// provably sent nothing gives its reservation back; an `unknown` one is spent. JobWorkflow and
// RenderWorkflow on the time-skipping test server, with stub activities.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/activity';
import { FailureType } from '../../../domain/failures';
import type { JobSettings, PlanItem } from '../../../jobfile/plan';
import { planFor, runJob, stubActivities, timeSkippingPerTest, type TimeSkippingTemporal } from '../../support/time-skipping';

const MINUTE = 60_000;
const polling = { initialMs: MINUTE, maxMs: 5 * MINUTE, timeoutMs: 60 * MINUTE };
/** Every item's estimate: a budget of $35 pays for 7 of them. */
const ITEM_USD = 5;

async function budgetedPlan(name: string, count: number, settings: Partial<JobSettings>) {
  const prompts = Array.from({ length: count }, (_, i) => `${name} ${i + 1}`);
  return planFor(name, prompts, { polling, budget: { maxUsd: 35 }, ...settings });
}

/** Pages as the worker hands them out: each item with its estimate (activities/plan.ts readPlanItems). */
function pricedPages(plan: { items: PlanItem[] }) {
  return async ({ offset, limit }: { offset: number; limit: number }) => {
    const items = plan.items.slice(offset, offset + limit).map((item) => ({ ...item, estimateUsd: ITEM_USD }));
    return { items, nextOffset: offset + items.length };
  };
}

/** How many runs the job's workflow took, following its continue-as-new chain. */
async function runsOf(env: TimeSkippingTemporal, workflowId: string, firstRunId: string): Promise<number> {
  let runs = 1;
  for (let runId = firstRunId; ; runs += 1) {
    const history = await env.workflows.getHandle(workflowId, runId).fetchHistory();
    const next = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!next) return runs;
    runId = next;
  }
}

describe('JobWorkflow never crosses budget.max_usd', () => {
  const server = timeSkippingPerTest();

  it('with a window of 10, starts exactly the 7 items the budget pays for and stops with exit 1', async () => {
    const plan = await budgetedPlan('seven', 10, { concurrency: { maxInFlight: 10 } });
    const { stubs, creates, events } = stubActivities(server.env, plan, { renderMs: 10 * MINUTE });

    const result = await runJob(server.env, server.bundle, { ...stubs, readPlanItems: pricedPages(plan) }, 'seven');

    assert.equal(creates.size, 7, `creates: ${[...creates.keys()].join(', ')}`);
    assert.equal(
      [...creates.values()].reduce((a, b) => a + b, 0),
      7,
    );
    assert.equal(result.counts.succeeded, 7);
    assert.equal(result.notStarted, 3);
    assert.equal(result.stoppedBy?.kind, 'budget_reached');
    assert.equal(result.stoppedBy?.exitCode, 1);
    assert.equal(
      result.stoppedBy?.message,
      'budget reached: $35.00 of $35.00 spent or reserved; 3 items not started; raise budget.max_usd and run again',
    );
    const rows = events.flatMap((e) => (e.kind === 'record' ? [e.row] : []));
    assert.equal(rows.length, 7, 'the items not started have no manifest row');
    for (const row of rows) {
      assert.equal(row.cost_usd, ITEM_USD);
      assert.equal(row.cost_source, 'estimated');
    }
  });

  it('run --budget wins over the job file, and the spend of earlier runs counts', async () => {
    const plan = await budgetedPlan('earlier', 10, { concurrency: { maxInFlight: 10 }, budget: { maxUsd: 1000 } });
    const { stubs, creates } = stubActivities(server.env, plan, { renderMs: MINUTE });
    const prepared = { settings: plan.settings, runDate: '2025-01-01', digest: 'stub', itemCount: plan.items.length };
    const withEarlierSpend = {
      ...stubs,
      readPlanItems: pricedPages(plan),
      // $10 recorded by earlier runs in the manifest, and the budget of `run --budget 35`.
      async preparePlan(input: { budgetUsd?: number }) {
        assert.equal(input.budgetUsd, 35);
        return { ...prepared, settings: { ...prepared.settings, budget: { maxUsd: input.budgetUsd } }, spentUsd: 10 };
      },
    };

    const result = await runJob(server.env, server.bundle, withEarlierSpend, 'earlier', { budgetUsd: 35 });

    assert.equal(creates.size, 5, '$10 of $35 was spent before: 5 items of $5 fit');
    assert.equal(result.notStarted, 5);
    assert.match(result.stoppedBy?.message ?? '', /^budget reached: \$35\.00 of \$35\.00 spent or reserved; 5 items not started/);
  });

  it('keeps its reservations across continue-as-new', async () => {
    // Short renders: the test server stops skipping time once a run has continued as new
    // (test/support/time-skipping.ts), so the clock runs at normal speed.
    const plan = await budgetedPlan('carried', 10, {
      concurrency: { maxInFlight: 3 },
      polling: { initialMs: 250, maxMs: 500, timeoutMs: 10 * MINUTE },
    });
    const { stubs, creates } = stubActivities(server.env, plan, { renderMs: 1_000 });
    let firstRunId = '';

    const result = await runJob(
      server.env,
      server.bundle,
      { ...stubs, readPlanItems: pricedPages(plan) },
      'carried',
      { historyBudget: 40 },
      async (handle) => {
        firstRunId = handle.firstExecutionRunId;
      },
    );

    assert.equal(creates.size, 7, `creates: ${[...creates.keys()].join(', ')}`);
    assert.equal(result.counts.succeeded, 7);
    assert.equal(result.notStarted, 3);
    assert.equal(result.stoppedBy?.kind, 'budget_reached');
    const runs = await runsOf(server.env, 'reelflow-carried', firstRunId);
    assert.ok(runs >= 2, `ran in ${runs} runs`);
  });

  it('a create that provably sent nothing gives its reservation back', async () => {
    const plan = await budgetedPlan('unsent', 10, { concurrency: { maxInFlight: 10 } });
    const { stubs, creates, events } = stubActivities(server.env, plan, {
      renderMs: 10 * MINUTE,
      beforeCreate: async (prompt) => {
        if (prompt === 'unsent 2') {
          throw ApplicationFailure.create({ type: FailureType.createNotSent, nonRetryable: true, message: 'nothing was sent' });
        }
      },
    });

    const result = await runJob(server.env, server.bundle, { ...stubs, readPlanItems: pricedPages(plan) }, 'unsent');

    assert.equal(result.counts.succeeded, 7, 'the released $5 paid for an eighth item');
    assert.equal(result.counts.failed, 1);
    assert.equal(creates.size, 8);
    assert.equal(result.notStarted, 2);
    const unsent = events.find((e) => e.kind === 'record' && e.prompt === 'unsent 2');
    assert.equal(unsent?.kind === 'record' ? unsent.row.cost_usd : undefined, 0);
  });

  it('an unknown create counts as spent', async () => {
    const plan = await budgetedPlan('ambiguous', 10, { concurrency: { maxInFlight: 10 } });
    const { stubs, creates, events } = stubActivities(server.env, plan, {
      renderMs: 10 * MINUTE,
      beforeCreate: async (prompt) => {
        if (prompt === 'ambiguous 2') {
          throw ApplicationFailure.create({ type: FailureType.ambiguousCreate, nonRetryable: true, message: 'the answer was lost' });
        }
      },
    });

    const result = await runJob(server.env, server.bundle, { ...stubs, readPlanItems: pricedPages(plan) }, 'ambiguous');

    assert.equal(result.counts.succeeded, 6);
    assert.equal(result.counts.unknown, 1);
    assert.equal(creates.size, 7, 'no eighth item: the unknown create may be billed');
    assert.equal(result.notStarted, 3);
    const unknown = events.find((e) => e.kind === 'record' && e.prompt === 'ambiguous 2');
    assert.equal(unknown?.kind === 'record' ? unknown.row.cost_usd : undefined, ITEM_USD);
  });

  /** The job of `billedBudget` with every create answered as billed at `billedUsd` (LiteLLM's x-litellm-response-cost). */
  async function billedJob(name: string, billedUsd: number) {
    const plan = await budgetedPlan(name, 10, { concurrency: { maxInFlight: 10 } });
    const { stubs, creates, events } = stubActivities(server.env, plan, { renderMs: 10 * MINUTE });
    const billing = {
      ...stubs,
      readPlanItems: pricedPages(plan),
      async createTaskMarked(input: Parameters<typeof stubs.createTaskMarked>[0]) {
        return { ...(await stubs.createTaskMarked(input)), billedUsd };
      },
    };
    const result = await runJob(server.env, server.bundle, billing, name);
    return { result, creates, rows: events.flatMap((e) => (e.kind === 'record' ? [e.row] : [])) };
  }

  it("counts the gateway's billed figure where it gives one above the estimate", async () => {
    // $5.50 where $5 was estimated: 7 reserved at $5, each spends $5.50; no eighth fits.
    const { result, creates, rows } = await billedJob('billed-above', 5.5);
    assert.equal(creates.size, 7);
    assert.equal(result.notStarted, 3);
    for (const row of rows) assert.deepEqual([row.cost_usd, row.cost_source], [5.5, 'billed']);
  });

  it('never counts a billed figure below the estimate: the create costs the estimate (a $0 header makes nothing free)', async () => {
    for (const [name, billed] of [
      ['billed-below', 4],
      ['billed-zero', 0],
    ] as const) {
      const { result, creates, rows } = await billedJob(name, billed);
      assert.equal(creates.size, 7, `${name}: 7 at $5 is the budget's $35`);
      assert.equal(result.notStarted, 3);
      assert.match(result.stoppedBy?.message ?? '', /^budget reached: \$35\.00 of \$35\.00 spent or reserved; 3 items not started/);
      for (const row of rows) assert.deepEqual([row.cost_usd, row.cost_source], [5, 'estimated'], name);
    }
  });

  it("reserves each item's prompt rewrite too, when the page says it is not stored yet, and records what it spent", async () => {
    // $4 a create and $1 a rewrite: $35 pays for 7 items, not the 8 the creates alone would fit.
    const plan = await budgetedPlan('rewrites', 10, {
      concurrency: { maxInFlight: 10 },
      enhance: { model: 'claude-sonnet-4-6', maxTokens: 100 },
    });
    const { stubs, creates, events } = stubActivities(server.env, plan, { renderMs: 10 * MINUTE });
    const rewrites: string[] = [];
    const withRewrites = {
      ...stubs,
      async readPlanItems({ offset, limit }: { offset: number; limit: number }) {
        // The first item's rewrite is stored already: nothing to reserve for it.
        const items = plan.items
          .slice(offset, offset + limit)
          .map((item) => ({ ...item, estimateUsd: 4, ...(item.index === 1 ? {} : { rewriteEstimateUsd: 1 }) }));
        return { items, nextOffset: offset + items.length };
      },
      async enhancePrompt({ prompt }: { prompt: string }) {
        rewrites.push(prompt);
        return `rewritten: ${prompt}`;
      },
    };

    const result = await runJob(server.env, server.bundle, withRewrites, 'rewrites');

    assert.equal(creates.size, 7, `creates: ${[...creates.keys()].join(', ')}`);
    assert.equal(result.notStarted, 3);
    assert.equal(
      result.stoppedBy?.message,
      'budget reached: $34.00 of $35.00 spent or reserved; 3 items not started; raise budget.max_usd and run again',
    );
    const rows = events.flatMap((e) => (e.kind === 'record' ? [e.row] : []));
    const first = rows.find((r) => r.index === 1);
    assert.deepEqual([first?.cost_usd, first?.rewrite_cost_usd], [4, undefined]);
    for (const row of rows.filter((r) => r.index !== 1)) assert.deepEqual([row.cost_usd, row.rewrite_cost_usd], [4, 1]);
  });

  it("replaces a rewrite's reservation by what its answer's usage cost: the rest of the estimate pays for more items", async () => {
    // $4 a create, $1 a rewrite reserved, $0.25 a rewrite as its usage priced it. Reserving $5 an item,
    // $35 starts 7; once they end they spent $29.75, and an 8th ($5 reserved) fits; a 9th does not.
    const plan = await budgetedPlan('usage', 10, {
      concurrency: { maxInFlight: 10 },
      enhance: { model: 'claude-sonnet-4-6', maxTokens: 100 },
    });
    const { stubs, creates, events } = stubActivities(server.env, plan, { renderMs: 10 * MINUTE });
    const asked: Array<{ withCost?: boolean; price?: unknown }> = [];
    const priced = {
      ...stubs,
      async readPlanItems({ offset, limit }: { offset: number; limit: number }) {
        const price = { perMillionInputTokens: 3, perMillionOutputTokens: 15 };
        const items = plan.items
          .slice(offset, offset + limit)
          .map((item) => ({ ...item, estimateUsd: 4, rewriteEstimateUsd: 1, rewritePrice: price }));
        return { items, nextOffset: offset + items.length };
      },
      async enhancePrompt(input: { prompt: string; withCost?: boolean; price?: unknown }) {
        asked.push({ withCost: input.withCost, price: input.price });
        return { prompt: `rewritten: ${input.prompt}`, paid: true, cost: { usd: 0.25, source: 'usage' as const } };
      },
    };

    const result = await runJob(server.env, server.bundle, priced, 'usage');

    assert.equal(creates.size, 8, `creates: ${[...creates.keys()].join(', ')}`);
    assert.equal(result.notStarted, 2);
    assert.equal(
      result.stoppedBy?.message,
      'budget reached: $34.00 of $35.00 spent or reserved; 2 items not started; raise budget.max_usd and run again',
    );
    assert.deepEqual(asked[0], { withCost: true, price: { perMillionInputTokens: 3, perMillionOutputTokens: 15 } });
    const rows = events.flatMap((e) => (e.kind === 'record' ? [e.row] : []));
    assert.equal(rows.length, 8);
    for (const row of rows) {
      assert.deepEqual([row.cost_usd, row.rewrite_cost_usd, row.rewrite_cost_source], [4, 0.25, 'usage']);
      assert.ok(row.prompt && creates.has(`rewritten: ${row.prompt}`), 'the create carried the rewrite');
    }
  });

  it('a stored rewrite the enhance activity reused spends nothing: its reservation is released whole', async () => {
    // The page reserved $1 for each rewrite, but each was found stored when its item ran (another
    // run made them meanwhile): $4 an item is spent, so after the first 7 end, 1 more fits ($28 + $5).
    const plan = await budgetedPlan('reused', 10, {
      concurrency: { maxInFlight: 10 },
      enhance: { model: 'claude-sonnet-4-6', maxTokens: 100 },
    });
    const { stubs, creates, events } = stubActivities(server.env, plan, { renderMs: 10 * MINUTE });
    const reused = {
      ...stubs,
      async readPlanItems({ offset, limit }: { offset: number; limit: number }) {
        const items = plan.items.slice(offset, offset + limit).map((item) => ({ ...item, estimateUsd: 4, rewriteEstimateUsd: 1 }));
        return { items, nextOffset: offset + items.length };
      },
      async enhancePrompt({ prompt }: { prompt: string }) {
        return { prompt: `stored: ${prompt}`, paid: false };
      },
    };

    const result = await runJob(server.env, server.bundle, reused, 'reused');

    assert.equal(creates.size, 8, `creates: ${[...creates.keys()].join(', ')}`);
    const rows = events.flatMap((e) => (e.kind === 'record' ? [e.row] : []));
    for (const row of rows) assert.deepEqual([row.cost_usd, row.rewrite_cost_usd, row.rewrite_cost_source], [4, undefined, undefined]);
    assert.equal(result.notStarted, 2);
  });

  it('a rewrite paid for before a job-wide cause left its item not started still counts as spent', async () => {
    // Both rewrites are answered ($0.25 each, from usage), then every create is refused (401): the
    // items stay not started, with no manifest row, but their Messages calls were paid.
    const plan = await budgetedPlan('refused', 2, {
      concurrency: { maxInFlight: 2 },
      enhance: { model: 'claude-sonnet-4-6', maxTokens: 100 },
    });
    const { stubs, events } = stubActivities(server.env, plan, { renderMs: 10 * MINUTE });
    const refused = {
      ...stubs,
      async readPlanItems({ offset, limit }: { offset: number; limit: number }) {
        const items = plan.items.slice(offset, offset + limit).map((item) => ({ ...item, estimateUsd: 4, rewriteEstimateUsd: 1 }));
        return { items, nextOffset: offset + items.length };
      },
      async enhancePrompt({ prompt }: { prompt: string }) {
        return {
          prompt: `rewritten: ${prompt}`,
          paid: true,
          cost: { usd: 0.25, source: 'usage' as const },
          at: '2025-01-01T00:00:00.000Z',
        };
      },
      async createTaskMarked(): Promise<never> {
        throw ApplicationFailure.create({ type: FailureType.auth, nonRetryable: true, message: 'the gateway refused the key (401)' });
      },
    };

    const result = await runJob(server.env, server.bundle, refused, 'refused');

    assert.equal(result.stoppedBy?.kind, FailureType.auth);
    assert.equal(result.notStarted, 2);
    assert.equal(events.filter((e) => e.kind === 'record').length, 0, 'not started: no manifest row');
    assert.equal(result.spentUsd, 0.5, 'the two paid rewrites are spent');
  });
});
