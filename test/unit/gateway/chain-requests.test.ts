// Chains of shots on the wire (docs/chains.md, docs/protocol.md): frames sent with their roles in
// metadata.content, return_last_frame for an item whose last frame a later item needs, the openai
// protocol's one image as the first frame, and the provider's last frame read back (untrusted).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RenderRequest } from '../../../jobfile/plan';
import { buildGeneralCreateBody } from '../../../gateway/general';
import { parseTaskBody } from '../../../gateway/normalize';
import { buildOpenaiCreateBody } from '../../../gateway/openai';

const FIRST = Buffer.from('first-frame-png');
const STYLE = Buffer.from('style-png');
const dataUrl = (b: Buffer) => `data:image/png;base64,${b.toString('base64')}`;

function request(over: Partial<RenderRequest> = {}): RenderRequest {
  return { model: 'doubao-seedance-2-0-260128', protocol: 'general', prompt: 'He opens the door', references: [], ...over };
}

describe('general create: frames and return_last_frame', () => {
  it('sends each frame with its role in metadata.content, and return_last_frame when asked', async () => {
    const body = JSON.parse(
      await buildGeneralCreateBody(
        request({
          returnLastFrame: true,
          references: [
            { kind: 'image', role: 'first_frame', source: 'https://cdn.example.com/first.png', local: false },
            { kind: 'image', role: 'last_frame', source: 'https://cdn.example.com/last.png', local: false },
          ],
        }),
      ),
    ) as { metadata: Record<string, unknown> };
    assert.deepEqual(body.metadata, {
      return_last_frame: true,
      content: [
        { type: 'image_url', image_url: { url: 'https://cdn.example.com/first.png' }, role: 'first_frame' },
        { type: 'image_url', image_url: { url: 'https://cdn.example.com/last.png' }, role: 'last_frame' },
      ],
    });
  });

  it('sends no return_last_frame for a request that does not ask (every request before chains)', async () => {
    const body = JSON.parse(await buildGeneralCreateBody(request())) as Record<string, unknown>;
    assert.deepEqual(body, { model: 'doubao-seedance-2-0-260128', prompt: 'He opens the door' });
  });
});

describe('openai create: the first frame is the one image', () => {
  it('uploads the first frame as input_reference even when another image comes first', async () => {
    const built = await buildOpenaiCreateBody(
      request({
        model: 'veo-3.1-fast-generate-preview',
        protocol: 'openai',
        references: [
          { kind: 'image', role: 'reference_image', source: dataUrl(STYLE), local: false },
          { kind: 'image', role: 'first_frame', source: dataUrl(FIRST), local: false },
        ],
      }),
      () => Promise.reject(new Error('no remote fetch expected')),
    );
    const chunks: Buffer[] = [];
    for await (const c of built.body) chunks.push(Buffer.from(c));
    built.dispose();
    const bytes = Buffer.concat(chunks);
    assert.ok(bytes.includes(FIRST));
    assert.ok(!bytes.includes(STYLE));
    assert.equal(bytes.toString('latin1').match(/name="input_reference"/g)?.length, 1);
  });
});

describe('reading the last frame back', () => {
  /** new-api v0.10.0's general retrieve of a Seedance task: the upstream's task in data.data. */
  const seedance = (status: string, upstream: Record<string, unknown>) => ({
    code: 'success',
    message: '',
    data: {
      task_id: 'cgt-1795489389216-ac0ee7',
      action: 'generate',
      status,
      fail_reason: status === 'SUCCESS' ? 'http://127.0.0.1:43231/files/cgt-1795489389216-ac0ee7.mp4' : 'task failed',
      progress: '100%',
      data: { id: 'cgt-1795489389216-ac0ee7', status: status === 'SUCCESS' ? 'succeeded' : 'failed', ...upstream },
    },
  });

  it("takes content.last_frame_url of new-api's upstream task on success", () => {
    const parsed = parseTaskBody(
      seedance('SUCCESS', {
        content: { video_url: 'http://127.0.0.1:43231/files/v.mp4', last_frame_url: 'http://127.0.0.1:43231/files/v-last.png?sig=a%20b' },
      }),
    );
    assert.equal(parsed.state, 'succeeded');
    assert.equal(parsed.lastFrameUrl, 'http://127.0.0.1:43231/files/v-last.png?sig=a%20b');
  });

  it('takes no last frame that is not an http(s) address of sane length, nor one of a failed task', () => {
    const cases: unknown[] = [
      'file:///etc/passwd',
      'javascript:alert(1)',
      `https://cdn.example.com/${'a'.repeat(20_000)}.png`,
      42,
      { url: 'https://cdn.example.com/x.png' },
      '',
    ];
    for (const last_frame_url of cases) {
      const parsed = parseTaskBody(seedance('SUCCESS', { content: { video_url: 'https://cdn.example.com/v.mp4', last_frame_url } }));
      assert.equal(parsed.state, 'succeeded');
      assert.equal(parsed.lastFrameUrl, undefined, JSON.stringify(last_frame_url).slice(0, 40));
    }
    const failed = parseTaskBody(seedance('FAILURE', { content: { last_frame_url: 'https://cdn.example.com/x.png' } }));
    assert.equal(failed.state, 'failed');
    assert.equal(failed.lastFrameUrl, undefined);
  });

  it('finds none in an answer of the seed gateway, whose tasks carry no upstream task', () => {
    const parsed = parseTaskBody({
      code: 'success',
      data: { task_id: 't', status: 'SUCCESS', result_url: 'https://cdn.example.com/v.mp4' },
    });
    assert.equal(parsed.resultUrl, 'https://cdn.example.com/v.mp4');
    assert.equal(parsed.lastFrameUrl, undefined);
  });
});
