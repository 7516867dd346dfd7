// Fidelity: the official SDKs must be able to talk to the simulator. If they cannot, the simulator
// is wrong, not the SDK.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import Anthropic0 from 'anthropic-sdk-0';
import OpenAI, { toFile } from 'openai';
import { KEY, sleep, withSim } from './helpers';

const MSG = { model: 'claude-sonnet-4-6', max_tokens: 300, messages: [{ role: 'user' as const, content: 'a koi pond in rain' }] };

test('openai v6: videos.create (multipart with input_reference), retrieve, downloadContent', async () => {
  await withSim({ renderMs: 200, videoBytes: 256 * 1024 }, async (sim) => {
    const client = new OpenAI({ apiKey: KEY, baseURL: `${sim.urls[0] as string}/v1`, maxRetries: 0 });
    const created = await client.videos.create({
      model: 'veo-3.1-fast-generate-001',
      prompt: 'a paper boat',
      seconds: '4',
      size: '1280x720',
      input_reference: await toFile(Buffer.from('\x89PNG not really'), 'ref.png', { type: 'image/png' }),
    });
    assert.equal(created.status, 'queued');
    assert.equal(created.seconds, '4');
    let v = await client.videos.retrieve(created.id);
    for (let i = 0; i < 100 && v.status !== 'completed'; i++) {
      await sleep(20);
      v = await client.videos.retrieve(created.id);
    }
    assert.equal(v.status, 'completed');
    assert.equal(v.progress, 100);
    const res = await client.videos.downloadContent(created.id);
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.equal(bytes.length, 256 * 1024);
    assert.equal(bytes.subarray(4, 8).toString('latin1'), 'ftyp');
    assert.deepEqual(sim.stats().createsByPrompt, { 'a paper boat': 1 });
  });
});

test('openai v6: typed errors for bad key, unknown model, not completed, rate limit', async () => {
  await withSim({ renderMs: 60_000 }, async (sim) => {
    const baseURL = `${sim.urls[0] as string}/v1`;
    const bad = new OpenAI({ apiKey: 'sk-wrong', baseURL, maxRetries: 0 });
    await assert.rejects(bad.videos.retrieve('task_x'), OpenAI.AuthenticationError);
    const client = new OpenAI({ apiKey: KEY, baseURL, maxRetries: 0 });
    await assert.rejects(client.videos.create({ model: 'veo-9' as 'veo-3.1-fast-generate-001', prompt: 'x' }), OpenAI.NotFoundError);
    const v = await client.videos.create({ model: 'veo-3.1-fast-generate-001', prompt: 'x' });
    await assert.rejects(client.videos.downloadContent(v.id), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError);
      assert.match(e.message, /Task is not completed yet/);
      return true;
    });
    sim.setFaults({ rateLimitRate: 1, rateLimitKind: 'retry-after-seconds' });
    await assert.rejects(client.videos.retrieve(v.id), OpenAI.RateLimitError);
    // With retries on, the SDK honours Retry-After and gets through once the fault is lifted.
    const retrying = new OpenAI({ apiKey: KEY, baseURL, maxRetries: 2 });
    setTimeout(() => sim.setFaults({ rateLimitRate: 0 }), 300);
    const again = await retrying.videos.retrieve(v.id);
    assert.equal(again.id, v.id);
  });
});

test('@anthropic-ai/sdk 1.x: messages.create and messages.stream; it sends Bearer and a newer version', async () => {
  await withSim({}, async (sim) => {
    const client = new Anthropic({ apiKey: KEY, baseURL: sim.urls[0] as string, maxRetries: 0 });
    const m = await client.messages.create(MSG);
    assert.equal(m.role, 'assistant');
    assert.equal(m.stop_reason, 'end_turn');
    const first = m.content[0];
    assert.ok(first?.type === 'text');
    assert.match(first.text, /^a koi pond in rain\./);
    const stream = client.messages.stream({ ...MSG, model: 'claude-haiku-4-5' });
    const types: string[] = [];
    let text = '';
    stream.on('streamEvent', (e) => types.push(e.type));
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    assert.equal(text, first.text);
    assert.equal(final.stop_reason, 'end_turn');
    assert.equal(types[0], 'message_start');
    assert.equal(types[types.length - 1], 'message_stop');
    const s = sim.stats();
    // What the 1.x SDK actually sends (record it, the gateway must accept it): see the report.
    assert.equal(s.messagesAuth['bearer'], 2);
    assert.deepEqual(s.anthropicVersions, { '2026-10-21': 2 });
    const bad = new Anthropic({ apiKey: 'sk-wrong', baseURL: sim.urls[0] as string, maxRetries: 0 });
    await assert.rejects(bad.messages.create(MSG), Anthropic.AuthenticationError);
  });
});

test('anthropic-sdk-0 (0.x): messages.create and messages.stream with x-api-key and 2023-06-01', async () => {
  await withSim({}, async (sim) => {
    const client = new Anthropic0({ apiKey: KEY, baseURL: sim.urls[0] as string, maxRetries: 0 });
    const m = await client.messages.create(MSG);
    assert.equal(m.content[0]?.type, 'text');
    const stream = client.messages.stream(MSG);
    let text = '';
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    assert.equal(final.usage.output_tokens, m.usage.output_tokens);
    assert.equal(text, (m.content[0] as { text: string }).text);
    const s = sim.stats();
    assert.equal(s.messagesAuth['x-api-key'], 2);
    assert.equal(s.anthropicVersions['2023-06-01'], 2);
    await assert.rejects(client.messages.create({ ...MSG, model: 'claude-none' }), Anthropic0.NotFoundError);
    sim.setFaults({ streamErrorRate: 1 });
    await assert.rejects(client.messages.stream(MSG).finalMessage(), /Overloaded/);
  });
});
