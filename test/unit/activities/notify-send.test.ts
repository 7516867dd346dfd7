// The shapes of a job event per target (docs/notifications.md): the Standard Webhooks signature as
// the reference library checks it, Slack's escaped text, ntfy's headers, and errors that never show
// an address (a Slack URL is its credential) or a secret.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { webhookIdFor } from '../../../activities/notify';
import { sampleEvent, type JobEvent } from '../../../activities/notify-event';
import { buildRequest, DeliveryError, ntfyRequest, send, slackMessage } from '../../../activities/notify-send';
import type { NotifyTarget } from '../../../jobfile/notify-settings';

const SECRET = `whsec_${Buffer.from('unit-test-secret-of-32-bytes!!!!').toString('base64')}`;
const target = (kind: NotifyTarget['kind'], url: string): NotifyTarget => ({
  name: `t-${kind}`,
  kind,
  url,
  ...(kind === 'webhook' ? { secretEnv: 'S' } : {}),
  events: ['job.ended'],
  retryForMs: 3_600_000,
  where: 'notify.yaml:1:1',
});

function ended(outcome: NonNullable<JobEvent['data']['outcome']>, cause: string | null = null): JobEvent {
  const event = sampleEvent(new Date('2026-11-28T03:00:00Z'));
  return { ...event, data: { ...event.data, job: 'night-shots', outcome, cause, counts: { succeeded: 2, failed: 1 } } };
}

describe('job event shapes', () => {
  it('signs a webhook so that the Standard Webhooks reference verifier accepts it, and rejects a tampered body', () => {
    const id = webhookIdFor('reelflow-night/run-1/job.ended');
    assert.match(id, /^msg_[0-9a-f]{32}$/);
    assert.equal(webhookIdFor('reelflow-night/run-1/job.ended'), id, 'the same id on every attempt');
    assert.notEqual(webhookIdFor('reelflow-night/run-2/job.ended'), id, 'another run of the job: another event');
    const request = buildRequest(target('webhook', 'https://ops.example/h'), ended('partial'), id, SECRET, Date.now());
    const verified = new Webhook(SECRET).verify(request.body, request.headers) as JobEvent;
    assert.equal(verified.data.outcome, 'partial');
    assert.equal(request.headers['webhook-id'], id);
    assert.throws(() => new Webhook(SECRET).verify(request.body.replace('partial', 'succeeded'), request.headers));
  });

  it("escapes job-provided text in Slack's mrkdwn, so a cause cannot mention a channel or forge a link", () => {
    const message = slackMessage(ended('stopped', 'refused: <!channel> see <https://evil.example|docs> & more'));
    const text = JSON.stringify(message);
    assert.ok(!text.includes('<!channel>') && !text.includes('<https://evil'), text);
    assert.ok(text.includes('&lt;!channel&gt;') && text.includes('&amp; more'), text);
    assert.match(message.text, /^night-shots stopped \(2 succeeded, 1 failed\)$/);
  });

  it('gives ntfy a title, a priority by outcome, tags and a click link to the files', () => {
    const failed = ntfyRequest(ended('failed'));
    assert.deepEqual(
      [failed.headers.title, failed.headers.priority, failed.headers.click],
      ['night-shots failed', 'high', 'file:///tmp/reelflow-notify-test/out'],
    );
    assert.equal(ntfyRequest(ended('succeeded')).headers.priority, 'default');
    assert.match(failed.body, /^items: 2 succeeded, 1 failed\nspent: \$1\.50\nfiles: /);
  });

  it('never shows the address or the secret in an error: an unreachable Slack and a receiver echoing them', async () => {
    const slack = target('slack', 'http://127.0.0.1:9/services/T000/B000/SECRETPATH');
    await assert.rejects(send(slack, buildRequest(slack, ended('failed'), 'msg_x', undefined, Date.now()), []), (e: Error) => {
      assert.ok(e instanceof DeliveryError);
      assert.match(e.message, /^t-slack \(slack at 127\.0\.0\.1:9\): /);
      assert.ok(!e.message.includes('SECRETPATH'), e.message);
      return true;
    });
    const server = createServer((req, res) => res.writeHead(400).end(`bad request to ${req.url} signed ${SECRET}`));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const echo = target('webhook', `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/SECRETPATH`);
    try {
      await assert.rejects(send(echo, buildRequest(echo, ended('failed'), 'msg_x', SECRET, Date.now()), [SECRET]), (e: Error) => {
        assert.match(e.message, /answered 400: bad request to \[REDACTED\] signed \[REDACTED\]/);
        return true;
      });
    } finally {
      server.close();
    }
  });
});
