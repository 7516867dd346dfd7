import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RenderRequest } from '../../../jobfile/plan';
import { buildGeneralCreateBody, secondsString } from '../../../gateway/general';
import { buildMessagesBody, MESSAGES_HEADERS, parseMessageBody } from '../../../gateway/messages';
import { buildOpenaiCreateBody } from '../../../gateway/openai';

let dir = '';
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-req-'));
  await writeFile(join(dir, 'ref.png'), PNG);
});
after(async () => rm(dir, { recursive: true, force: true }));

function request(over: Partial<RenderRequest> = {}): RenderRequest {
  return { model: 'seedance-1-0-pro-250528', protocol: 'general', prompt: 'a cat', references: [], ...over };
}

async function collect(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of body) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

describe('general create body', () => {
  it('omits unset keys (never null) and keeps the model name as given', async () => {
    const body = JSON.parse(await buildGeneralCreateBody(request())) as Record<string, unknown>;
    assert.deepEqual(body, { model: 'seedance-1-0-pro-250528', prompt: 'a cat' });
  });
  it('sends seconds as a digit string and metadata next to content', async () => {
    const body = JSON.parse(
      await buildGeneralCreateBody(
        request({
          seconds: '5',
          resolution: '720p',
          ratio: '16:9',
          generateAudio: false,
          watermark: false,
          references: [
            { kind: 'image', role: 'reference_image', source: join(dir, 'ref.png'), local: true },
            { kind: 'video', role: 'reference_video', source: 'https://assets.example.com/b.mp4', local: false },
            { kind: 'audio', role: 'reference_audio', source: 'https://assets.example.com/c.mp3', local: false },
          ],
        }),
      ),
    ) as { seconds: unknown; prompt: string; metadata: Record<string, unknown> & { content: Record<string, unknown>[] } };
    assert.equal(body.seconds, '5');
    assert.equal(body.prompt, 'a cat');
    assert.equal(body.metadata.resolution, '720p');
    assert.equal(body.metadata.ratio, '16:9');
    assert.equal(body.metadata.generate_audio, false);
    assert.equal(body.metadata.watermark, false);
    assert.deepEqual(body.metadata.content[0], {
      type: 'image_url',
      image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` },
      role: 'reference_image',
    });
    assert.deepEqual(body.metadata.content[1], {
      type: 'video_url',
      video_url: { url: 'https://assets.example.com/b.mp4' },
      role: 'reference_video',
    });
    assert.deepEqual(body.metadata.content[2], {
      type: 'audio_url',
      audio_url: { url: 'https://assets.example.com/c.mp3' },
      role: 'reference_audio',
    });
  });
  it('coerces seconds to digits or refuses', () => {
    assert.equal(secondsString('5'), '5');
    assert.equal(secondsString(8), '8');
    assert.equal(secondsString('10.0'), '10');
    assert.equal(secondsString(undefined), undefined);
    assert.throws(() => secondsString('5s'), /whole number/);
    assert.throws(() => secondsString(2.5), /whole number/);
  });
});

describe('openai multipart create body', () => {
  it('streams fields and the first image as input_reference with a content-length', async () => {
    const built = await buildOpenaiCreateBody(
      request({
        protocol: 'openai',
        seconds: '8',
        size: '1280x720',
        references: [
          { kind: 'audio', role: 'reference_audio', source: 'https://x/c.mp3', local: false },
          { kind: 'image', role: 'reference_image', source: join(dir, 'ref.png'), local: true },
        ],
      }),
      () => Promise.reject(new Error('no remote fetch expected')),
    );
    const bytes = await collect(built.body);
    built.dispose();
    const boundary = /boundary=(.+)$/.exec(built.headers['content-type'] ?? '')?.[1] ?? '';
    assert.ok(boundary.length > 10);
    assert.equal(Number(built.headers['content-length']), bytes.length);
    const text = bytes.toString('latin1');
    assert.match(text, /name="model"\r\n\r\nseedance-1-0-pro-250528\r\n/);
    assert.match(text, /name="prompt"\r\n\r\na cat\r\n/);
    assert.match(text, /name="seconds"\r\n\r\n8\r\n/);
    assert.match(text, /name="size"\r\n\r\n1280x720\r\n/);
    assert.match(text, /name="input_reference"; filename="ref.png"\r\nContent-Type: image\/png\r\n\r\n/);
    assert.ok(bytes.includes(PNG));
    assert.ok(text.endsWith(`--${boundary}--\r\n`));
  });
  it('decodes a data: URL reference', async () => {
    const built = await buildOpenaiCreateBody(
      request({
        protocol: 'openai',
        references: [{ kind: 'image', role: 'reference_image', source: `data:image/png;base64,${PNG.toString('base64')}`, local: false }],
      }),
      () => Promise.reject(new Error('unexpected')),
    );
    const bytes = await collect(built.body);
    assert.ok(bytes.includes(PNG));
    assert.match(bytes.toString('latin1'), /filename="reference.png"/);
  });
});

describe('messages', () => {
  it('sends exactly the promised headers besides the key', () => {
    assert.deepEqual(MESSAGES_HEADERS, { 'anthropic-version': '2023-06-01', 'content-type': 'application/json' });
  });
  it('builds the minimal body and reads text blocks', () => {
    assert.deepEqual(JSON.parse(buildMessagesBody({ model: 'claude-x', maxTokens: 100, prompt: 'hi' })), {
      model: 'claude-x',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal((JSON.parse(buildMessagesBody({ model: 'm', maxTokens: 1, prompt: 'p', system: 's' })) as { system: string }).system, 's');
    const parsed = parseMessageBody(
      {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content: [{ type: 'text', text: 'Hello' }, { type: 'tool_use' }, { type: 'text', text: ' world' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 12, output_tokens: 40 },
      },
      'asked',
    );
    assert.deepEqual(parsed, {
      text: 'Hello world',
      model: 'claude-x',
      stopReason: 'end_turn',
      usage: { inputTokens: 12, outputTokens: 40 },
    });
    assert.equal(parseMessageBody({ type: 'error' }, 'm'), undefined);
  });
});
