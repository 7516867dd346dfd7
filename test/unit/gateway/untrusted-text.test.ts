// Gateway text is redacted and bounded where it enters (docs/security.md, "In detail": a gateway).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseMessageBody } from '../../../gateway/messages';
import { extractTaskId, parseTaskBody } from '../../../gateway/normalize';
import { gatewayText, registerSecret, unregisterSecret } from '../../../gateway/redact';

const KEY = 'gw-key-0123456789-abcdef';

describe('gateway text where it enters', () => {
  it('a fail_reason that echoes the Authorization header keeps no key', () => {
    registerSecret(KEY);
    try {
      const parsed = parseTaskBody({
        task_id: 't',
        status: 'FAILURE',
        fail_reason: `upstream said: bad request; headers: Authorization: Bearer ${KEY}`,
      });
      assert.equal(parsed.state, 'failed');
      assert.ok(!parsed.failReason!.includes(KEY), parsed.failReason);
      assert.match(parsed.failReason!, /\[REDACTED\]/);
    } finally {
      unregisterSecret(KEY);
    }
  });

  it('a 1,000,000-character reason is cut to 1,000 on one line', () => {
    const parsed = parseTaskBody({ task_id: 't', status: 'FAILURE', fail_reason: `line one\n${'x'.repeat(1_000_000)}` });
    assert.equal(parsed.failReason!.length, 1_001);
    assert.ok(parsed.failReason!.startsWith('line one x'));
    assert.ok(parsed.failReason!.endsWith('…'));
  });

  it('an absurdly long result_url is not taken as an address', () => {
    const parsed = parseTaskBody({ task_id: 't', status: 'SUCCESS', result_url: `https://cdn.example.com/${'a'.repeat(20_000)}.mp4` });
    assert.equal(parsed.resultUrl, undefined);
    assert.ok(parseTaskBody({ task_id: 't', status: 'SUCCESS', result_url: 'https://cdn.example.com/v.mp4?sig=abc' }).resultUrl);
  });

  it('gatewayText redacts sk- keys and bounds any text', () => {
    assert.equal(gatewayText('key sk-abcdef1234567890 leaked'), 'key [REDACTED] leaked');
    assert.equal(gatewayText('a'.repeat(500), 10), `${'a'.repeat(10)}…`);
  });
});

describe('gateway values where they enter', () => {
  it('a task id of a megabyte is not taken as an id; a real long one (LiteLLM, 130 characters) is', () => {
    assert.equal(extractTaskId({ id: 'x'.repeat(1_000_000) }), undefined);
    const litellm = `video_${'A'.repeat(124)}`;
    assert.equal(extractTaskId({ id: litellm }), litellm);
  });

  it('a rewritten prompt is bounded', () => {
    const parsed = parseMessageBody({ content: [{ type: 'text', text: 'y'.repeat(1_000_000) }], model: 'm' }, 'm');
    assert.equal(parsed?.text.length, 20_000);
  });
});
