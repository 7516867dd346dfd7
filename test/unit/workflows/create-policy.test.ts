// createWithPolicy (workflows/render.ts), run by real jobs on the time-skipping test server with
// stub creates: a create that may have reached the gateway is never made again on its own, one
// that provably sent nothing is, up to a bound.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { FailureType } from '../../../domain/failures';
import type { ManifestRow } from '../../../storage/manifest/row';
import { neverHeardFrom, planFor, runJob, timeSkippingPerTest, stubActivities, type StubEvent } from '../../support/time-skipping';

const MINUTE = 60_000;
const polling = { initialMs: MINUTE, maxMs: 5 * MINUTE, timeoutMs: 60 * MINUTE };

function ambiguous(): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.ambiguousCreate,
    nonRetryable: true,
    message: 'the response to the create was lost',
  });
}

function notSent(): ApplicationFailure {
  return ApplicationFailure.create({ type: FailureType.createNotSent, nonRetryable: true, message: 'the create was not sent' });
}

function rowsByPrompt(events: StubEvent[]): Map<string, ManifestRow> {
  return new Map(events.flatMap((e) => (e.kind === 'record' ? [[e.prompt, e.row] as const] : [])));
}

describe('createWithPolicy', () => {
  const server = timeSkippingPerTest();

  it('ends an item unknown when its create may have reached the gateway, and does not create it again', async () => {
    const plan = await planFor('ambiguous', ['lost response', 'fine'], { polling });
    const { stubs, events, creates } = stubActivities(server.env, plan, {
      renderMs: 3 * MINUTE,
      beforeCreate: async (prompt) => {
        if (prompt === 'lost response') throw ambiguous();
      },
    });

    const result = await runJob(server.env, server.bundle, stubs, 'ambiguous');

    assert.deepEqual([result.counts.unknown, result.counts.succeeded], [1, 1]);
    const row = rowsByPrompt(events).get('lost response');
    assert.equal(row?.state, 'unknown');
    assert.equal(row?.error?.kind, FailureType.ambiguousCreate);
    assert.equal(creates.get('lost response'), 1);
  });

  it('with retries.create: always, creates again after an unknown outcome, at most three times', async () => {
    const plan = await planFor('always', ['lost once', 'always lost'], { polling, retries: { create: 'always', download: 5 } });
    const { stubs, events, creates } = stubActivities(server.env, plan, {
      renderMs: 3 * MINUTE,
      beforeCreate: async (prompt, earlier) => {
        if (prompt === 'always lost' || earlier === 0) throw ambiguous();
      },
    });

    await runJob(server.env, server.bundle, stubs, 'always');

    const rows = rowsByPrompt(events);
    assert.equal(rows.get('lost once')?.state, 'succeeded');
    assert.equal(creates.get('lost once'), 2);
    assert.equal(rows.get('always lost')?.state, 'unknown');
    assert.equal(creates.get('always lost'), 3);
  });

  it('creates again after a create that sent nothing, and ends the item failed after six such tries', async () => {
    const plan = await planFor('unsent', ['unsent once', 'never sent'], { polling });
    const { stubs, events, creates } = stubActivities(server.env, plan, {
      renderMs: 3 * MINUTE,
      beforeCreate: async (prompt, earlier) => {
        if (prompt === 'never sent' || earlier === 0) throw notSent();
      },
    });

    await runJob(server.env, server.bundle, stubs, 'unsent');

    const rows = rowsByPrompt(events);
    assert.equal(rows.get('unsent once')?.state, 'succeeded');
    assert.equal(creates.get('unsent once'), 2);
    const failed = rows.get('never sent');
    assert.equal(failed?.state, 'failed');
    assert.equal(failed?.error?.kind, FailureType.createNotSent);
    assert.match(failed?.error?.message ?? '', /never sent, in 6 tries/);
    assert.equal(creates.get('never sent'), 6);
  });

  // About 20 s: a running activity holds the test server's clock, so its heartbeat timeout passes in real time.
  it('after a create timed out, creates again only if it never recorded that it was about to send', async () => {
    const plan = await planFor('timed-out', ['lost before sending', 'lost while sending'], { polling });
    const { stubs, events, creates } = stubActivities(server.env, plan, {
      renderMs: 3 * MINUTE,
      beforeCreate: async (prompt, earlier) => {
        if (earlier > 0) return;
        if (prompt === 'lost while sending') {
          // What the real create records with the server before its first byte (activities/create-marker.ts).
          const context = Context.current();
          await context.client.activity.heartbeat(context.info.taskToken, { createMaySend: true });
        }
        await neverHeardFrom();
      },
    });

    await runJob(server.env, server.bundle, stubs, 'timed-out');

    const rows = rowsByPrompt(events);
    assert.equal(rows.get('lost before sending')?.state, 'succeeded');
    assert.equal(creates.get('lost before sending'), 2);
    const unknown = rows.get('lost while sending');
    assert.equal(unknown?.state, 'unknown');
    assert.equal(unknown?.error?.kind, FailureType.activityTimeout);
    assert.match(unknown?.error?.message ?? '', /create did not finish in time \(HEARTBEAT\)/);
    assert.equal(creates.get('lost while sending'), 1);
  });
});
