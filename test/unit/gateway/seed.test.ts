// The seed on the wire (docs/takes.md): general metadata.seed, the openai `seed` form field; none when unset.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildGeneralCreateBody } from '../../../gateway/general';
import { buildOpenaiCreateBody } from '../../../gateway/openai';
import type { RenderRequest } from '../../../jobfile/plan';

const general = (seed?: number): RenderRequest => ({
  model: 'seedance-1-0-pro-250528',
  protocol: 'general',
  prompt: 'a cat',
  ratio: '16:9',
  references: [],
  ...(seed !== undefined ? { seed } : {}),
});

async function openaiText(seed?: number): Promise<string> {
  const built = await buildOpenaiCreateBody(
    { model: 'veo-3.1-fast-generate-001', protocol: 'openai', prompt: 'a cat', references: [], ...(seed !== undefined ? { seed } : {}) },
    () => Promise.reject(new Error('no remote fetch expected')),
  );
  const parts: Buffer[] = [];
  for await (const c of built.body) parts.push(Buffer.from(c));
  return Buffer.concat(parts).toString('utf8');
}

describe('seed on the wire', () => {
  it('general: metadata.seed beside the other metadata, a JSON number; absent when the request has none', async () => {
    const body = JSON.parse(await buildGeneralCreateBody(general(1234567))) as { metadata: Record<string, unknown> };
    assert.deepEqual(body.metadata, { ratio: '16:9', seed: 1234567 });
    const plain = JSON.parse(await buildGeneralCreateBody(general())) as { metadata: Record<string, unknown> };
    assert.deepEqual(plain.metadata, { ratio: '16:9' });
  });

  it('openai: a seed form field; absent when the request has none', async () => {
    assert.match(await openaiText(42), /name="seed"\r\n\r\n42\r\n/);
    assert.doesNotMatch(await openaiText(), /name="seed"/);
  });
});
