import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AUTH, JSON_AUTH, createGeneral, json, ok, raw, sleep, waitFinal, withSim } from './helpers';

const ORDER = ['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS'];

test('general create answers the documented shape and retrieve walks the real status sequence', async () => {
  await withSim({ renderMs: 600 }, async (sim) => {
    const base = sim.urls[0] as string;
    const r = ok(
      await raw(`${base}/v1/video/generations`, {
        method: 'POST',
        headers: JSON_AUTH,
        body: JSON.stringify({
          model: 'seedance-1-0-pro-250528',
          prompt: 'a red fox',
          seconds: '5',
          metadata: {
            resolution: '480p',
            ratio: '16:9',
            content: [{ type: 'image_url', image_url: { url: 'https://x/a.png' }, role: 'reference_image' }],
          },
        }),
      }),
    );
    assert.equal(r.status, 200);
    const created = JSON.parse(r.body.toString()) as Record<string, unknown>;
    assert.match(String(created['id']), /^task_[A-Za-z0-9]{32}$/);
    assert.equal(created['task_id'], created['id']);
    assert.equal(created['object'], 'video');
    assert.equal(created['model'], 'seedance-1-0-pro-250528');
    assert.equal(created['status'], 'queued');
    assert.equal(created['progress'], 0);
    assert.equal(typeof created['created_at'], 'number');

    const seen: string[] = [];
    const progress: number[] = [];
    let last: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++) {
      const body = json(await raw(`${base}/v1/video/generations/${String(created['id'])}`, { headers: AUTH })) as {
        code: string;
        message: string;
        data: Record<string, unknown>;
      };
      assert.equal(body.code, 'success');
      assert.equal(body.message, '');
      last = body.data;
      const st = String(last['status']);
      if (seen[seen.length - 1] !== st) seen.push(st);
      assert.match(String(last['progress']), /^\d{1,3}%$/);
      progress.push(Number(String(last['progress']).slice(0, -1)));
      if (st === 'SUCCESS') break;
      await sleep(8);
    }
    // Statuses only move forward along the real sequence, and IN_PROGRESS is seen with moving progress.
    const idx = seen.map((s) => ORDER.indexOf(s));
    assert.ok(
      idx.every((v, i) => v >= 0 && (i === 0 || v > (idx[i - 1] as number))),
      `sequence ${seen.join(' > ')}`,
    );
    assert.ok(seen.includes('IN_PROGRESS') && seen.includes('SUCCESS'), seen.join(','));
    assert.deepEqual(
      progress,
      [...progress].sort((a, b) => a - b),
    );
    assert.ok(new Set(progress.filter((p) => p > 0 && p < 100)).size >= 2, 'progress moves during IN_PROGRESS');
    assert.equal(last['progress'], '100%');
    assert.equal(last['result_url'], `${base}/v1/videos/${String(created['id'])}/content`);
    assert.equal(last['fail_reason'], '');
    assert.ok(Number(last['finish_time']) >= Number(last['start_time']) && Number(last['start_time']) > 0);
    // The result_url needs the Bearer key and serves a real MP4 at the requested resolution.
    assert.equal(ok(await raw(String(last['result_url']))).status, 401);
    const video = ok(await raw(String(last['result_url']), { headers: AUTH }));
    assert.equal(video.status, 200);
    assert.equal(video.body.subarray(4, 8).toString('latin1'), 'ftyp');
  });
});

test('failing renders copy the reason into result_url and fail_reason', async () => {
  await withSim({ renderMs: 0, faults: { failRate: 1 } }, async (sim) => {
    const base = sim.urls[0] as string;
    const id = await createGeneral(base, { model: 'kling-v2-1', prompt: 'doomed' });
    const data = await waitFinal(base, id);
    assert.equal(data['status'], 'FAILURE');
    assert.ok(String(data['fail_reason']).length > 10);
    assert.equal(data['result_url'], data['fail_reason']);
    assert.doesNotMatch(String(data['result_url']), /^https?:/);
    const dl = ok(await raw(`${base}/v1/videos/${id}/content`, { headers: AUTH }));
    assert.equal(dl.status, 400);
    assert.match(
      String((JSON.parse(dl.body.toString()) as { error: { message: string } }).error.message),
      /Task is not completed yet, current status: FAILURE/,
    );
  });
});

test('a share of failures is deterministic for a seed', async () => {
  const outcomes = async (): Promise<string[]> =>
    withSim({ renderMs: 0, seed: 42, faults: { failRate: 0.5 } }, async (sim) => {
      const base = sim.urls[0] as string;
      const out: string[] = [];
      for (let i = 0; i < 20; i++)
        out.push(
          String((await waitFinal(base, await createGeneral(base, { model: 'doubao-seedance-2-0-260128', prompt: `p${i}` })))['status']),
        );
      return out;
    });
  const a = await outcomes();
  const b = await outcomes();
  assert.deepEqual(a, b);
  assert.ok(a.includes('FAILURE') && a.includes('SUCCESS'), a.join(','));
});

test('auth and catalog: 401 OpenAI-style, unknown model 404, or 503 model_not_found when switched', async () => {
  await withSim({ group: 'vip' }, async (sim) => {
    const base = sim.urls[0] as string;
    const body = JSON.stringify({ model: 'doubao-seedance-2-0-260128', prompt: 'x' });
    const variants: Array<Record<string, string>> = [
      { 'content-type': 'application/json' },
      { authorization: 'Bearer sk-wrong', 'content-type': 'application/json' },
    ];
    for (const headers of variants) {
      const r = ok(await raw(`${base}/v1/video/generations`, { method: 'POST', headers, body }));
      assert.equal(r.status, 401);
      const e = JSON.parse(r.body.toString()) as { error: { message: string; type: string; code: string } };
      assert.match(e.error.message, /Invalid token \(request id: /);
      assert.equal(e.error.type, 'new_api_error');
    }
    assert.equal(ok(await raw(`${base}/v1/video/generations/task_x`)).status, 401);
    const unknown = JSON.stringify({ model: 'Seedance-1-0-Pro', prompt: 'x' });
    const r404 = ok(await raw(`${base}/v1/video/generations`, { method: 'POST', headers: JSON_AUTH, body: unknown }));
    assert.equal(r404.status, 404);
    assert.match(r404.body.toString(), /Seedance-1-0-Pro.*vip/);
    sim.setFaults({ modelNotFoundAs503: true });
    const r503 = ok(await raw(`${base}/v1/video/generations`, { method: 'POST', headers: JSON_AUTH, body: unknown }));
    assert.equal(r503.status, 503);
    const e = JSON.parse(r503.body.toString()) as { error: { message: string; code: string } };
    assert.equal(e.error.code, 'model_not_found');
    assert.match(e.error.message, /^No available channel for model Seedance-1-0-Pro under group vip/);
    assert.equal(sim.stats().tasksCreated, 0);
  });
});

test('bad input gets the gateway error shape and status, never a crash or a hang', async () => {
  await withSim({ maxBodyBytes: 64 * 1024 }, async (sim) => {
    const base = sim.urls[0] as string;
    const post = async (body: string): Promise<{ status: number; code: string; message: string }> => {
      const r = ok(await raw(`${base}/v1/video/generations`, { method: 'POST', headers: JSON_AUTH, body, timeoutMs: 5000 }));
      const j = JSON.parse(r.body.toString()) as { code: string; message: string; data: unknown };
      assert.equal(j.data, null);
      return { status: r.status, code: j.code, message: j.message };
    };
    const cases: Array<[string, RegExp]> = [
      ['{"model": "doubao-seedance-2-0-260128", "prompt": ', /invalid request body/],
      [JSON.stringify({ model: 'doubao-seedance-2-0-260128', prompt: 'x', seconds: 5 }), /cannot unmarshal number/],
      [JSON.stringify({ model: 'doubao-seedance-2-0-260128', prompt: 'x', seconds: 'five' }), /string of digits/],
      [JSON.stringify({ model: 'doubao-seedance-2-0-260128' }), /prompt is required/],
      [JSON.stringify({ model: 'doubao-seedance-2-0-260128', prompt: '   ' }), /prompt is required/],
      [JSON.stringify({ prompt: 'x' }), /model is required/],
      ['[1,2]', /JSON object/],
      [
        JSON.stringify({
          model: 'doubao-seedance-2-0-260128',
          prompt: 'x',
          metadata: { content: [{ type: 'gif_url', gif_url: { url: 'u' } }] },
        }),
        /not one of/,
      ],
      [
        JSON.stringify({
          model: 'doubao-seedance-2-0-260128',
          prompt: 'x',
          metadata: { content: [{ type: 'image_url', image_url: { url: 'u' }, role: 'reference_video' }] },
        }),
        /does not match type image_url/,
      ],
      [
        JSON.stringify({ model: 'doubao-seedance-2-0-260128', prompt: 'x', metadata: { content: [{ type: 'video_url' }] } }),
        /url is required/,
      ],
      [JSON.stringify({ model: 'doubao-seedance-2-0-260128', prompt: 'x', metadata: 'hd' }), /metadata must be an object/],
      [JSON.stringify({ model: 'claude-haiku-4-5', prompt: 'x' }), /does not support video/],
    ];
    for (const [body, re] of cases) {
      const r = await post(body);
      assert.equal(r.status, 400, body);
      assert.equal(r.code, 'invalid_request', body);
      assert.match(r.message, re, body);
    }
    const big = ok(
      await raw(`${base}/v1/video/generations`, {
        method: 'POST',
        headers: JSON_AUTH,
        body: JSON.stringify({ model: 'doubao-seedance-2-0-260128', prompt: 'x'.repeat(100 * 1024) }),
        timeoutMs: 5000,
      }),
    );
    assert.equal(big.status, 413);
    assert.match(big.body.toString(), /too large/);
    const nf = ok(await raw(`${base}/v1/nothing`, { headers: AUTH }));
    assert.equal(nf.status, 404);
    assert.match(nf.body.toString(), /Invalid URL \(GET \/v1\/nothing\)/);
    // Unknown ids are task_not_exist, as in the real gateway.
    const missing = json(await raw(`${base}/v1/video/generations/task_nope`, { headers: AUTH }));
    assert.deepEqual(missing, { code: 'task_not_exist', message: 'task_not_exist', data: null });
    assert.equal(sim.stats().tasksCreated, 0);
    // Still serving after all of it.
    assert.equal(ok(await raw(`${base}/__sim/stats`, { headers: AUTH })).status, 200);
  });
});
