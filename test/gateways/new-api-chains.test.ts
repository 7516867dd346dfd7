// Chains of shots through the real new-api v0.10.0 (scripts/new-api.sh) in front of the fake
// upstream (docs/chains.md): what reaches Seedance of a create with frames and return_last_frame,
// and whether the provider's last frame comes back through new-api's `data`. Found by this test:
// v0.10.0's Seedance channel (type 54) sends the upstream only the prompt, so the frame roles and
// return_last_frame are dropped; a last frame the upstream gives all the same comes back in
// `data.data.content.last_frame_url`, which reelflow reads as the task's lastFrameUrl.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GatewayClient, TaskStatus } from '../../gateway/contract';
import { createGatewayClient } from '../../gateway/index';
import type { RenderRequest } from '../../jobfile/plan';
import { LAST_FRAME_ANYWAY, LAST_FRAME_PNG, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { GATEWAY_MODELS, startNewApi, type Gateway } from '../support/gateways';

let upstream: FakeUpstream;
let gateway: Gateway;
let client: GatewayClient;

before(async () => {
  upstream = await startFakeUpstream({ renderMs: 500 });
  gateway = await startNewApi(upstream);
  client = createGatewayClient({ baseUrls: [gateway.url], apiKey: gateway.key, allowPrivateTargets: true });
});
after(async () => {
  await client?.close();
  await gateway?.stop();
  await upstream?.stop();
});

/** A shot continuing from a frame: a first and a last frame, and its own last frame asked for. */
function shot(prompt: string): RenderRequest {
  return {
    model: GATEWAY_MODELS.general,
    protocol: 'general',
    prompt,
    seconds: '5',
    returnLastFrame: true,
    references: [
      { kind: 'image', role: 'first_frame', source: 'https://cdn.example.com/shot-1-last.png', local: false },
      { kind: 'image', role: 'last_frame', source: 'https://cdn.example.com/end.png', local: false },
    ],
  };
}

/** new-api reads its upstream every 15 s: a task ends within a few rounds. */
async function finished(taskId: string, createdAt: number): Promise<TaskStatus> {
  const until = Date.now() + 90_000;
  for (;;) {
    const status = await client.getTask({ taskId, protocol: 'general' }, { createdAt });
    if (status.state === 'succeeded' || status.state === 'failed') return status;
    if (Date.now() > until) throw new Error(`task ${taskId} still ${status.rawStatus} after 90 s`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/** The Ark creates the upstream received, as JSON. */
const arkCreates = () =>
  upstream.requests
    .filter((r) => r.method === 'POST' && r.path === '/api/v3/contents/generations/tasks')
    .map((r) => JSON.parse(r.body) as Record<string, unknown>);

describe('chains through new-api v0.10.0', () => {
  it('drops the frame roles and return_last_frame before the upstream; a last frame the upstream gives comes back through data', async () => {
    const plainPrompt = 'chain: he opens the lamp room door';
    const anywayPrompt = `chain: the beam sweeps the sea ${LAST_FRAME_ANYWAY}`;
    const createdAt = Date.now();
    const plain = await client.createTask(shot(plainPrompt));
    const anyway = await client.createTask(shot(anywayPrompt));

    // What reached Seedance: the model and the prompt, nothing else (test/gateways/OBSERVED.md).
    const sent = arkCreates();
    assert.deepEqual(sent, [
      { model: GATEWAY_MODELS.general, content: [{ type: 'text', text: plainPrompt }] },
      { model: GATEWAY_MODELS.general, content: [{ type: 'text', text: anywayPrompt }] },
    ]);

    const [plainDone, anywayDone] = await Promise.all([finished(plain.taskId, createdAt), finished(anyway.taskId, createdAt)]);
    assert.equal(plainDone.state, 'succeeded');
    assert.equal(plainDone.lastFrameUrl, undefined, 'the upstream was never asked, so it gave no last frame');
    assert.equal(anywayDone.state, 'succeeded');
    assert.equal(anywayDone.lastFrameUrl, `${upstream.url}/files/${anyway.taskId}-last.png`);
    const png = Buffer.from(await (await fetch(anywayDone.lastFrameUrl as string)).arrayBuffer());
    assert.deepEqual(png, LAST_FRAME_PNG);
  });
});
