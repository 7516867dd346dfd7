import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TaskRef } from '../../../gateway/contract';
import { DownloadError } from '../../../gateway/index';
import { assertNoKey, digest, harness, referenceDigest, render, waitDone, type Harness } from './helpers';

const SIZE = 3 * 1024 * 1024 + 17;

describe('downloads', () => {
  let h: Harness;
  let general: TaskRef;
  let openai: TaskRef;
  let expected: { bytes: number; sha256: string };

  before(async () => {
    h = await harness(
      { ports: [0, 0], cdn: true, cdnUrlTtlMs: 400, videoBytes: SIZE, contentRedirect: true },
      { downloadResumeAttempts: 12 },
    );
    const g = await h.client.createTask(render('dl-general'));
    const gDone = await waitDone(h.client, { taskId: g.taskId, protocol: 'general' });
    general = { taskId: g.taskId, protocol: 'general', ...(gDone.resultUrl ? { resultUrl: gDone.resultUrl } : {}) };
    const o = await h.client.createTask(render('dl-openai', { protocol: 'openai', model: 'veo-3.1-fast-generate-001', seconds: '4' }));
    await waitDone(h.client, { taskId: o.taskId, protocol: 'openai' });
    openai = { taskId: o.taskId, protocol: 'openai' };
    expected = await referenceDigest(h, general);
  });
  after(async () => h.close());

  it('general: streams from the CDN result_url without sending the key there', async () => {
    assert.equal(expected.bytes, SIZE);
    const d = await h.client.openVideo({ taskId: general.taskId, protocol: 'general' }); // fresh address
    assert.equal(d.offset, 0);
    assert.equal(d.totalBytes, SIZE);
    assert.ok(d.source.startsWith(h.sim.cdnUrl ?? 'x'));
    assert.ok(!d.source.includes('?'), 'query (signature) stripped from source');
    assert.deepEqual(await digest(d.body), expected);
    assert.equal(h.sim.stats().cdnAuthHeadersSeen, 0);
  });

  it('openai: content endpoint redirects to the CDN; key only to the gateway', async () => {
    const d = await h.client.openVideo(openai);
    const got = await digest(d.body);
    assert.equal(got.bytes, d.totalBytes);
    assert.equal(h.sim.stats().cdnAuthHeadersSeen, 0);
  });

  it('an expired result_url is refreshed once through a status check', async () => {
    const polls = h.sim.stats().pollsByTask[general.taskId] ?? 0;
    await new Promise((r) => setTimeout(r, 500)); // the signed URL from before() has expired
    const d = await h.client.openVideo(general);
    assert.deepEqual(await digest(d.body), expected);
    assert.equal(h.sim.stats().pollsByTask[general.taskId], polls + 1);
    assert.equal(h.sim.stats().cdnAuthHeadersSeen, 0);
  });

  it('cuts are resumed inside the stream with Range: same bytes, same sha256', async () => {
    h.sim.setFaults({ cutDownloadRate: 0.7 });
    try {
      for (const ref of [{ taskId: general.taskId, protocol: 'general' as const }, openai]) {
        const d = await h.client.openVideo(ref);
        const got = await digest(d.body);
        assert.equal(got.bytes, d.totalBytes);
        if (ref === openai) continue;
        assert.deepEqual(got, expected);
      }
      assert.ok(((h.sim.stats() as unknown as { faults: Record<string, number> }).faults['cut-download'] ?? 0) > 0);
      assert.ok(h.logs.some((l) => /resuming/.test(l)));
    } finally {
      h.sim.setFaults({ cutDownloadRate: 0 });
    }
  });

  it('resumes from an offset across calls with If-Range', async () => {
    const first = await h.client.openVideo({ taskId: general.taskId, protocol: 'general' });
    first.body.destroy();
    const offset = 1_000_003;
    const d = await h.client.openVideo(
      { taskId: general.taskId, protocol: 'general' },
      { offset, ...(first.validator ? { ifRange: first.validator } : {}) },
    );
    assert.equal(d.offset, offset);
    assert.equal(d.totalBytes, SIZE);
    const got = await digest(d.body);
    assert.equal(got.bytes, SIZE - offset);
    // A stale validator: the server sends everything and the client says so with offset 0.
    const stale = await h.client.openVideo({ taskId: general.taskId, protocol: 'general' }, { offset, ifRange: '"stale"' });
    assert.equal(stale.offset, 0);
    assert.deepEqual(await digest(stale.body), expected);
  });

  it('fails over to another base for gateway content when the primary dies', async () => {
    await h.sim.setPortMode(0, 'refuse');
    try {
      const d = await h.client.openVideo(openai);
      assert.equal(d.baseUrl, h.sim.urls[1]);
      const got = await digest(d.body);
      assert.equal(got.bytes, d.totalBytes);
    } finally {
      await h.sim.setPortMode(0, 'up');
    }
  });

  it('never logs the key', () => {
    assertNoKey(h.logs.join('\n'));
  });
});

// A consumer prepares its file before it reads (the local storage makes the folder, records the
// part's owner, fsyncs): a video that fits the body's buffer downloads meanwhile, and a download
// that failed in that time emitted 'error' with no listener, which ended the worker process (CI:
// the chaos test's worker died, "download cut at byte 259281 and not resumable after 5 attempts").
describe('a download that fails before its consumer reads', () => {
  let h: Harness;
  before(async () => {
    h = await harness({ videoBytes: 256 * 1024 });
  });
  after(async () => h.close());

  it("is the consumer's error, not the process's", async () => {
    const created = await h.client.createTask(render('failed before read'));
    const done = await waitDone(h.client, { taskId: created.taskId, protocol: 'general' });
    h.sim.setFaults({ cutDownloadRate: 1 });
    const d = await h.client.openVideo({ taskId: created.taskId, protocol: 'general', resultUrl: done.resultUrl });
    try {
      for (let i = 0; i < 200 && !d.body.destroyed; i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(d.body.destroyed, 'every opening was cut: the download gave up before anyone read it');
      await assert.rejects(digest(d.body), (e: unknown) => {
        assert.ok(e instanceof DownloadError, String(e));
        assert.match(e.message, /not resumable after 5 attempts/);
        return true;
      });
    } finally {
      d.body.destroy();
      h.sim.setFaults({ cutDownloadRate: 0 });
    }
  });
});
