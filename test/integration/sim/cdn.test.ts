import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AUTH, createGeneral, ok, raw, sleep, waitFinal, withSim } from './helpers';

test('cdn result_url: separate host, refuses Authorization (403, counted), serves ranges without it', async () => {
  await withSim({ renderMs: 0, cdn: true, videoBytes: 100_000 }, async (sim) => {
    const base = sim.urls[0] as string;
    assert.ok(sim.cdnUrl && sim.cdnUrl !== base);
    const data = await waitFinal(base, await createGeneral(base, { model: 'doubao-seedance-2-0-260128', prompt: 'cdn' }));
    const url = String(data['result_url']);
    assert.ok(url.startsWith(`${sim.cdnUrl as string}/`), url);
    const withKey = ok(await raw(url, { headers: AUTH }));
    assert.equal(withKey.status, 403);
    assert.match(withKey.body.toString(), /<Code>AccessDenied<\/Code>/);
    assert.equal(sim.stats().cdnAuthHeadersSeen, 1);
    const full = ok(await raw(url));
    assert.equal(full.status, 200);
    assert.equal(full.body.length, 100_000);
    assert.equal(full.headers['content-type'], 'video/mp4');
    const part = ok(await raw(url, { headers: { range: 'bytes=0-7' } }));
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], 'bytes 0-7/100000');
    assert.deepEqual(part.body, full.body.subarray(0, 8));
    const tampered = ok(await raw(url.replace(/signature=[0-9a-f]/, 'signature=z')));
    assert.equal(tampered.status, 403);
    assert.match(tampered.body.toString(), /SignatureDoesNotMatch/);
    assert.equal(sim.stats().cdnAuthHeadersSeen, 1);
  });
});

test('cdn URLs expire after cdnUrlTtlMs; a fresh status check gives a working one', async () => {
  await withSim({ renderMs: 0, cdn: true, cdnUrlTtlMs: 150 }, async (sim) => {
    const base = sim.urls[0] as string;
    const id = await createGeneral(base, { model: 'doubao-seedance-2-0-260128', prompt: 'ttl' });
    const first = String((await waitFinal(base, id))['result_url']);
    assert.equal(ok(await raw(first)).status, 200);
    await sleep(250);
    const expired = ok(await raw(first));
    assert.equal(expired.status, 403);
    assert.match(expired.body.toString(), /Request has expired/);
    const fresh = String((await waitFinal(base, id))['result_url']);
    assert.notEqual(fresh, first);
    assert.equal(ok(await raw(fresh)).status, 200);
  });
});

test('contentRedirect: the gateway content endpoint answers 302 to the signed CDN URL', async () => {
  await withSim({ renderMs: 0, cdn: true, contentRedirect: true }, async (sim) => {
    const base = sim.urls[0] as string;
    const id = await createGeneral(base, { model: 'doubao-seedance-2-0-260128', prompt: 'redirect' });
    await waitFinal(base, id);
    const r = ok(await raw(`${base}/v1/videos/${id}/content`, { headers: AUTH }));
    assert.equal(r.status, 302);
    const location = String(r.headers['location']);
    assert.ok(location.startsWith(sim.cdnUrl as string));
    // fetch drops Authorization on a cross-origin redirect, so following it works.
    const followed = await fetch(`${base}/v1/videos/${id}/content`, { headers: AUTH });
    assert.equal(followed.status, 200);
    assert.equal(
      Buffer.from(await followed.arrayBuffer())
        .subarray(4, 8)
        .toString('latin1'),
      'ftyp',
    );
    assert.equal(sim.stats().cdnAuthHeadersSeen, 0);
  });
});
