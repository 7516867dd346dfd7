// Each simulator profile against the record of the gateway it imitates (gateway/dialects), over real
// HTTP: a gateway's record and the simulator that stands in for it in the tests say the same things,
// so a third gateway is one record, one profile and this test. Checked per record, not by the union
// of all of them: its task-not-found answer, its status words, where its finished video's address
// is, whether its content endpoint honours Range, and whether its answers name it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseErrorBody } from '../../../gateway/classify';
import { litellm, newApi, recogniseGateway, says, seed, type GatewayDialect } from '../../../gateway/dialects';
import { parseTaskBody } from '../../../gateway/normalize';
import { encodeLitellmId } from '../../../sim/litellm';
import type { SimProfile } from '../../../sim/index';
import { harness, KEY, MODEL, render, waitDone } from './helpers';

const AUTH = { authorization: `Bearer ${KEY}` };

interface Case {
  profile: SimProfile;
  dialect: GatewayDialect;
  /** The route that reads a task the gateway does not know, and its answer's id. */
  unknownTask: (base: string) => string;
  /** A model of the general protocol, where the profile serves one. */
  general?: string;
}

const CASES: Case[] = [
  { profile: 'default', dialect: seed, unknownTask: (b) => `${b}/v1/video/generations/task_nope`, general: MODEL },
  { profile: 'new-api-0.10', dialect: newApi, unknownTask: (b) => `${b}/v1/video/generations/task_nope`, general: MODEL },
  {
    profile: 'litellm',
    dialect: litellm,
    unknownTask: (b) => `${b}/v1/videos/${encodeURIComponent(encodeLitellmId('veo-3.1-fast-generate-001', 'video_nope'))}`,
  },
];

const statusKey = (raw: string) =>
  raw
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

describe('simulator profiles against their gateway records', () => {
  for (const c of CASES) {
    it(`${c.profile} speaks as gateway/dialects/${c.dialect.name} says`, async () => {
      const h = await harness({ profile: c.profile, refreshMs: 50 });
      try {
        const base = h.sim.urls[0]!;
        // A task it does not know, in its own words.
        const unknown = await fetch(c.unknownTask(base), { headers: AUTH });
        const text = await unknown.text();
        assert.ok(says(parseErrorBody(text), c.dialect.taskNotFound), `${unknown.status} ${text}`);
        assert.equal(recogniseGateway({ headers: {}, text })?.dialect.name, c.dialect.recognise ? c.dialect.name : undefined, text);

        const seen = new Set<string>();
        const follow = async (request: ReturnType<typeof render>) => {
          const createdAt = Date.now();
          const created = await h.client.createTask(request);
          const ref = { taskId: created.taskId, protocol: request.protocol };
          for (;;) {
            const status = await h.client.getTask(ref, { createdAt });
            if (status.rawStatus !== 'task_not_exist') seen.add(statusKey(status.rawStatus));
            if (status.state === 'succeeded' || status.state === 'failed') break;
            await new Promise((r) => setTimeout(r, 20));
          }
          return { ref, done: await waitDone(h.client, ref, createdAt) };
        };

        // The OpenAI video protocol, served by every profile: its content endpoint and Range.
        const sora = await follow(render('a cat', { model: 'veo-3.1-fast-generate-001', protocol: 'openai', seconds: '4' }));
        assert.equal(sora.done.state, 'succeeded');
        const content = await fetch(`${base}/v1/videos/${encodeURIComponent(sora.ref.taskId)}/content`, {
          headers: { ...AUTH, range: 'bytes=10-' },
        });
        await content.arrayBuffer();
        assert.equal(content.status, c.dialect.contentEndpoint.honoursRange ? 206 : 200);

        // The general protocol, where served: the finished task's address is where the record says.
        if (c.general) {
          const task = await follow(render('a dog', { model: c.general }));
          assert.equal(task.done.state, 'succeeded');
          const answer = (await (await fetch(`${base}/v1/video/generations/${task.ref.taskId}`, { headers: AUTH })).json()) as {
            data: Record<string, unknown>;
          };
          const upstream = answer.data.data as Record<string, unknown> | undefined;
          const places = c.dialect.videoAddress.map((at) => at({ task: answer.data, upstream }));
          assert.ok(parseTaskBody(answer).resultUrl, JSON.stringify(answer));
          assert.ok(
            places.some((p) => p === parseTaskBody(answer).resultUrl),
            `${JSON.stringify(places)} vs ${parseTaskBody(answer).resultUrl}`,
          );
        }
        // Every status word it used is one of its record's.
        for (const word of seen) assert.ok(word in c.dialect.statusWords, `${c.profile} said ${word}`);
      } finally {
        await h.close();
      }
    });
  }
});
