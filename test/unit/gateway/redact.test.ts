import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuthError, GatewayUnavailableError } from '../../../gateway/errors';
import { classifyGatewayError } from '../../../gateway/classify';
import { redact, redactObject, registerSecret, unregisterSecret } from '../../../gateway/redact';

const KEY = 'sk-test-0123456789abcdefXYZ';
const OTHER = 'plainsecretvalue42';

describe('redact', () => {
  it('removes Authorization and x-api-key header values', () => {
    assert.equal(redact('Authorization: Bearer abc.def-ghi'), 'Authorization: Bearer [REDACTED]');
    assert.equal(redact('x-api-key: hunter2hunter2'), 'x-api-key: [REDACTED]');
    assert.equal(
      redact('{"authorization":"Bearer zzz","X-Api-Key":"yyy"}'),
      '{"authorization":"Bearer [REDACTED]","X-Api-Key":"[REDACTED]"}',
    );
    assert.equal(redact('curl -H "Authorization: Bearer abc"'), 'curl -H "Authorization: Bearer [REDACTED]"');
  });
  it('removes anything that looks like an sk- key', () => {
    assert.equal(redact(`key was ${KEY}.`), 'key was [REDACTED].');
    assert.equal(redact('sk-ant-api03-AbCdEf_123-xyz'), '[REDACTED]');
    assert.equal(redact('task-sk-1'), 'task-sk-1');
  });
  it('removes given and registered secrets verbatim', () => {
    assert.equal(redact(`value ${OTHER} here`, [OTHER]), 'value [REDACTED] here');
    assert.equal(redact(`value ${OTHER} here`), `value ${OTHER} here`);
    registerSecret(OTHER);
    try {
      assert.equal(redact(`value ${OTHER} here`), 'value [REDACTED] here');
    } finally {
      unregisterSecret(OTHER);
    }
  });
  it('leaves ordinary text alone', () => {
    const text = 'model "veo-3" is not available to this key: check the key in $GATEWAY_API_KEY';
    assert.equal(redact(text), text);
  });
});

describe('redactObject', () => {
  it('deep-copies with credential keys and key-like strings replaced', () => {
    const input = {
      headers: { Authorization: `Bearer ${KEY}`, 'x-api-key': OTHER, accept: 'video/*' },
      note: `used ${KEY}`,
      list: [KEY, 3],
      apiKey: OTHER,
      nested: { deeper: { token: 'abc' } },
    };
    const out = redactObject(input);
    const text = JSON.stringify(out);
    assert.ok(!text.includes(KEY));
    assert.ok(!text.includes(OTHER));
    assert.equal(out.headers.accept, 'video/*');
    assert.equal(out.list[1], 3);
    assert.equal(input.headers.Authorization, `Bearer ${KEY}`, 'input untouched');
  });
  it('turns errors into plain name/message/code objects and survives cycles', () => {
    const err = Object.assign(new Error(`boom ${KEY}`), { code: 'ECONNRESET', options: { headers: { authorization: KEY } } });
    const cyclic: Record<string, unknown> = { err };
    cyclic.self = cyclic;
    const text = JSON.stringify(redactObject(cyclic));
    assert.ok(!text.includes(KEY));
    assert.match(text, /ECONNRESET/);
  });
});

describe('errors never carry the key', () => {
  it('redacts messages, server messages, stacks and causes', () => {
    registerSecret(KEY);
    try {
      const cause = Object.assign(new Error(`socket closed while sending Authorization: Bearer ${KEY}`), {
        code: 'UND_ERR_SOCKET',
        request: { headers: { authorization: `Bearer ${KEY}` } },
      });
      const err = new GatewayUnavailableError(`failed with ${KEY}`, { cause, serverMessage: `echo ${KEY}` });
      const all = [
        err.message,
        err.serverMessage,
        err.stack,
        JSON.stringify(err),
        JSON.stringify(err.cause),
        String((err.cause as Error).stack),
        JSON.stringify(Object.entries(err.cause as object)),
      ].join('\n');
      assert.ok(!all.includes(KEY), all);
      assert.equal((err.cause as { code?: string }).code, 'UND_ERR_SOCKET');
      assert.equal((err.cause as { request?: unknown }).request, undefined);

      const auth = classifyGatewayError({
        status: 401,
        body: JSON.stringify({ error: { message: `Invalid token ${KEY}` } }),
        apiKeyEnv: 'K',
      });
      assert.ok(auth instanceof AuthError);
      assert.ok(!auth.message.includes(KEY));
      assert.ok(!JSON.stringify(auth).includes(KEY));
    } finally {
      unregisterSecret(KEY);
    }
  });
});
