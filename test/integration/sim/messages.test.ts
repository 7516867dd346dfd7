import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KEY, ok, raw, withSim } from './helpers';

const HEADERS = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
const REQ = { model: 'claude-sonnet-4-6', max_tokens: 256, messages: [{ role: 'user', content: 'a lighthouse at dusk' }] };

function events(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  return text
    .split('\n\n')
    .filter((b) => b.trim() !== '')
    .map((block) => {
      const ev = /^event: (.+)$/m.exec(block)?.[1] ?? '';
      const data = JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>;
      assert.equal(data['type'], ev, 'event name matches data.type');
      return { event: ev, data };
    });
}

test('plain JSON answer has the Messages shape', async () => {
  await withSim({}, async (sim) => {
    const r = ok(await raw(`${sim.urls[0] as string}/v1/messages`, { method: 'POST', headers: HEADERS, body: JSON.stringify(REQ) }));
    assert.equal(r.status, 200);
    const m = JSON.parse(r.body.toString()) as Record<string, unknown>;
    assert.match(String(m['id']), /^msg_/);
    assert.equal(m['type'], 'message');
    assert.equal(m['role'], 'assistant');
    assert.equal(m['model'], 'claude-sonnet-4-6');
    assert.equal(m['stop_reason'], 'end_turn');
    assert.equal(m['stop_sequence'], null);
    const content = m['content'] as Array<{ type: string; text: string }>;
    assert.equal(content[0]?.type, 'text');
    assert.match(content[0]?.text ?? '', /^a lighthouse at dusk\. Cinematic/);
    const usage = m['usage'] as { input_tokens: number; output_tokens: number };
    assert.ok(usage.input_tokens > 0 && usage.output_tokens > 0);
  });
});

test('stream: SSE events in the documented order and the deltas spell the plain answer', async () => {
  await withSim({}, async (sim) => {
    const base = sim.urls[0] as string;
    const plain = JSON.parse(
      ok(await raw(`${base}/v1/messages`, { method: 'POST', headers: HEADERS, body: JSON.stringify(REQ) })).body.toString(),
    ) as { content: Array<{ text: string }>; usage: { output_tokens: number } };
    const r = ok(await raw(`${base}/v1/messages`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ ...REQ, stream: true }) }));
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/event-stream/);
    const evs = events(r.body.toString()).filter((e) => e.event !== 'ping');
    const names = evs.map((e) => e.event);
    assert.equal(names[0], 'message_start');
    assert.equal(names[1], 'content_block_start');
    const deltas = names.slice(2, names.indexOf('content_block_stop'));
    assert.ok(deltas.length >= 3 && deltas.every((n) => n === 'content_block_delta'));
    assert.deepEqual(names.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
    const text = evs
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => {
        const d = e.data['delta'] as { type: string; text: string };
        assert.equal(d.type, 'text_delta');
        return d.text;
      })
      .join('');
    assert.equal(text, plain.content[0]?.text);
    const md = evs.find((e) => e.event === 'message_delta')?.data as { delta: { stop_reason: string }; usage: { output_tokens: number } };
    assert.equal(md.delta.stop_reason, 'end_turn');
    assert.equal(md.usage.output_tokens, plain.usage.output_tokens);
  });
});

test('max_tokens caps the answer with stop_reason max_tokens', async () => {
  await withSim({}, async (sim) => {
    const r = ok(
      await raw(`${sim.urls[0] as string}/v1/messages`, {
        method: 'POST',
        headers: HEADERS,
        body: JSON.stringify({ ...REQ, max_tokens: 3 }),
      }),
    );
    const m = JSON.parse(r.body.toString()) as { stop_reason: string; content: Array<{ text: string }> };
    assert.equal(m.stop_reason, 'max_tokens');
    assert.equal(m.content[0]?.text.length, 12);
  });
});

test('auth: x-api-key or Bearer, any version date; missing version 400; bad key 401', async () => {
  await withSim({}, async (sim) => {
    const url = `${sim.urls[0] as string}/v1/messages`;
    const body = JSON.stringify(REQ);
    const bearer = { authorization: `Bearer ${KEY}`, 'anthropic-version': '2026-10-21', 'content-type': 'application/json' };
    assert.equal(ok(await raw(url, { method: 'POST', headers: bearer, body })).status, 200);
    const { 'anthropic-version': _v, ...noVersion } = HEADERS;
    const nv = ok(await raw(url, { method: 'POST', headers: noVersion, body }));
    assert.equal(nv.status, 400);
    const e = JSON.parse(nv.body.toString()) as { type: string; error: { type: string; message: string } };
    assert.equal(e.type, 'error');
    assert.equal(e.error.type, 'invalid_request_error');
    assert.match(e.error.message, /anthropic-version/);
    const bad = ok(await raw(url, { method: 'POST', headers: { ...HEADERS, 'x-api-key': 'sk-nope' }, body }));
    assert.equal(bad.status, 401);
    assert.match(bad.body.toString(), /Invalid token/);
    const none = ok(await raw(url, { method: 'POST', headers: { 'anthropic-version': '2023-06-01' }, body }));
    assert.equal(none.status, 401);
    const s = sim.stats();
    assert.equal(s.messagesAuth['bearer'], 1);
    assert.equal(s.anthropicVersions['2026-10-21'], 1);
  });
});

test('bad Messages input gets Anthropic-style 400s; unknown model 404', async () => {
  await withSim({ maxBodyBytes: 10_000 }, async (sim) => {
    const url = `${sim.urls[0] as string}/v1/messages`;
    const cases: Array<[string, RegExp]> = [
      ['{"model":', /error parsing the body/],
      [JSON.stringify({ ...REQ, model: undefined }), /model: Field required/],
      [JSON.stringify({ ...REQ, max_tokens: '10' }), /max_tokens/],
      [JSON.stringify({ ...REQ, messages: [] }), /at least one message/],
      [JSON.stringify({ ...REQ, messages: [{ role: 'system', content: 'x' }] }), /role/],
      [JSON.stringify({ ...REQ, messages: [{ role: 'user', content: [{ type: 'video', url: 'x' }] }] }), /unknown content block type/],
      [JSON.stringify({ ...REQ, messages: [{ role: 'user', content: [{ type: 'text' }] }] }), /text: Field required/],
      [JSON.stringify({ ...REQ, messages: [{ role: 'user', content: 5 }] }), /content/],
      [JSON.stringify({ ...REQ, stream: 'yes' }), /stream/],
      [JSON.stringify({ ...REQ, model: 'veo-3.1-fast-generate-001' }), /does not support the Messages API/],
    ];
    for (const [body, re] of cases) {
      const r = ok(await raw(url, { method: 'POST', headers: HEADERS, body }));
      assert.equal(r.status, 400, body);
      const e = JSON.parse(r.body.toString()) as { type: string; error: { type: string; message: string } };
      assert.equal(e.error.type, 'invalid_request_error', body);
      assert.match(e.error.message, re, body);
    }
    const unknown = ok(await raw(url, { method: 'POST', headers: HEADERS, body: JSON.stringify({ ...REQ, model: 'claude-opus-9' }) }));
    assert.equal(unknown.status, 404);
    const big = ok(await raw(url, { method: 'POST', headers: HEADERS, body: JSON.stringify({ ...REQ, system: 'x'.repeat(20_000) }) }));
    assert.equal(big.status, 413);
    assert.equal((JSON.parse(big.body.toString()) as { type: string }).type, 'error');
  });
});

test('stream error fault: an error event after the 200, no message_stop', async () => {
  await withSim({ faults: { streamErrorRate: 1 } }, async (sim) => {
    const r = ok(
      await raw(`${sim.urls[0] as string}/v1/messages`, {
        method: 'POST',
        headers: HEADERS,
        body: JSON.stringify({ ...REQ, stream: true }),
      }),
    );
    assert.equal(r.status, 200);
    const names = events(r.body.toString()).map((e) => e.event);
    assert.equal(names[0], 'message_start');
    assert.equal(names[names.length - 1], 'error');
    assert.ok(!names.includes('message_stop'));
    assert.equal(sim.stats().faults['stream-error'], 1);
  });
});
