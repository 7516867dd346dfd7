// The rewrite store (storage/records/rewrites.ts) on a real local directory and real S3 servers: one record
// per prompt text and enhance settings, shared by every item that sends it, the last write winning, reused only for the same prompt and enhance settings,
// hidden from the outputs, and nothing but a well-formed record read back.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EnhanceSettings } from '../../../jobfile/plan';
import { LocalStorage, type Storage } from '../../../storage';
import {
  MAX_RECORDED_CALLS,
  RewriteStore,
  promptDigest,
  rewriteCalls,
  rewriteRecord,
  settingsDigest,
  unrecordedRewrites,
} from '../../../storage/records/rewrites';
import { S3Storage } from '../../../storage/s3';
import { tempDir } from '../../support/jobs';
import { s3ServerKinds, startS3Server, type S3TestServer } from '../../support/s3-server';

const ENHANCE: EnhanceSettings = { model: 'claude-sonnet-4-6', maxTokens: 300, system: 'One cinematic shot.' };

/** What every backend must do; `open` gives a fresh, empty output location. */
function storeContract(open: () => Storage): void {
  it('finds a record only for the prompt and settings it was made from, whichever item asks; the last write wins', async () => {
    const storage = open();
    const store = new RewriteStore(storage);
    assert.equal(await store.find('a cliff at dusk', ENHANCE), undefined);
    await store.put(rewriteRecord({ key: 'hero', prompt: 'a cliff at dusk', enhance: ENHANCE, rewrite: 'first take', model: 'm' }));
    assert.equal((await store.find('a cliff at dusk', ENHANCE, 'hero'))?.rewrite, 'first take');
    assert.equal((await store.find('a cliff at dusk', ENHANCE, 'hero#take2'))?.rewrite, 'first take', 'another take of the prompt');
    assert.equal((await store.latest('a cliff at dusk', ENHANCE))?.rewrite, 'first take');
    assert.equal(await store.find('a cliff at dawn', ENHANCE), undefined, 'another prompt text');
    assert.equal(await store.find('a cliff at dusk', { ...ENHANCE, model: 'other' }), undefined, 'another model');
    assert.equal(await store.find('a cliff at dusk', { ...ENHANCE, system: undefined }), undefined, 'other instructions');
    assert.equal(await store.find('a cliff at dusk', { ...ENHANCE, maxTokens: 301 }), undefined, 'another budget');
    await store.put(
      rewriteRecord({
        key: 'villain',
        prompt: 'a cliff at dusk',
        enhance: ENHANCE,
        rewrite: 'second take',
        model: 'm',
        usage: { input_tokens: 12, output_tokens: 40 },
      }),
    );
    const latest = await store.find('a cliff at dusk', ENHANCE, 'hero');
    assert.equal(latest?.rewrite, 'second take');
    assert.deepEqual(latest?.usage, { input_tokens: 12, output_tokens: 40 });
    // A record of "no text" (the item keeps its prompt) is a record too.
    await store.put(rewriteRecord({ key: 'quiet', prompt: 'p', enhance: ENHANCE, rewrite: null, model: 'm' }));
    assert.equal((await store.find('p', ENHANCE))?.rewrite, null);
    // Records are reelflow's own files: never listed as outputs.
    assert.deepEqual(await storage.list(), []);
  });

  it("reuses an item's record from before records were kept per prompt text, for that item and prompt only", async () => {
    const storage = open();
    const store = new RewriteStore(storage);
    const v1 = {
      v: 1,
      key: 'hero',
      prompt_sha256: promptDigest('a cliff at dusk'),
      settings_sha256: settingsDigest(ENHANCE),
      rewrite: 'from before',
      model: 'm',
      at: '2026-11-01T00:00:00.000Z',
      calls: [{ at: '2026-11-01T00:00:00.000Z', by: 'render', cost_usd: 0.0004, cost_source: 'usage' }],
    };
    await storage.putRecord(`rewrites/${createHash('sha256').update('hero').digest('hex')}.json`, JSON.stringify(v1));
    assert.equal((await store.find('a cliff at dusk', ENHANCE, 'hero'))?.rewrite, 'from before');
    assert.equal(await store.find('a cliff at dusk', ENHANCE, 'villain'), undefined, 'another item');
    assert.equal(await store.find('a cliff at dawn', ENHANCE, 'hero'), undefined, 'an edited prompt');
    // Its paid call stays in the ledger, under its item.
    assert.deepEqual(await rewriteCalls(store), [{ ...v1.calls[0], key: 'hero' }]);
  });

  it('keeps every paid call in the records of every prompt text; the calls no row counts are the unrecorded spend', async () => {
    const store = new RewriteStore(open());
    const at = (s: number) => new Date(Date.UTC(2026, 10, 25, 12, 0, s));
    // `reelflow enhance` paid for the first; a render of the same prompt asked again (--re-enhance) for the second (its row names it).
    const first = rewriteRecord({
      key: 'hero',
      prompt: 'a cliff at dusk',
      enhance: ENHANCE,
      rewrite: 'first',
      model: 'm',
      at: at(1),
      paid: { by: 'enhance', cost: { usd: 0.0004, source: 'usage' } },
    });
    await store.put(first);
    const second = rewriteRecord({
      key: 'hero',
      prompt: 'a cliff at dusk',
      enhance: ENHANCE,
      rewrite: 'second',
      model: 'm',
      at: at(2),
      paid: { by: 'render', cost: { usd: 0.0005, source: 'usage' }, replaces: (await store.latest('a cliff at dusk', ENHANCE))! },
    });
    await store.put(second);
    // The edited prompt's render whose item was then left not started (no row): a record of its own, the old one's calls still counted.
    await store.put(
      rewriteRecord({
        key: 'hero',
        prompt: 'a cliff at dawn',
        enhance: ENHANCE,
        rewrite: 'o',
        model: 'm',
        at: at(3),
        paid: { by: 'render', cost: { usd: 0.0006, source: 'estimated' } },
      }),
    );
    // A record from before calls were kept.
    await store.put(rewriteRecord({ key: 'old', prompt: 'p', enhance: ENHANCE, rewrite: 'x', model: 'm', at: at(4) }));
    assert.deepEqual((await store.latest('a cliff at dusk', ENHANCE))?.calls, [
      { at: at(1).toISOString(), by: 'enhance', cost_usd: 0.0004, cost_source: 'usage' },
      { at: at(2).toISOString(), by: 'render', key: 'hero', cost_usd: 0.0005, cost_source: 'usage' },
    ]);
    const rows = [{ key: 'hero', rewrite_at: at(2).toISOString(), rewrite_cost_usd: 0.0005 }, { key: 'old' }];
    assert.deepEqual(await unrecordedRewrites(store, rows), [
      { key: '', at: at(1).toISOString(), by: 'enhance', cost_usd: 0.0004, cost_source: 'usage' },
      { key: 'hero', at: at(3).toISOString(), by: 'render', cost_usd: 0.0006, cost_source: 'estimated' },
    ]);
    // A row planted to name a paid call while counting less of it (or a cost that is no amount) does
    // not take the call out of the spend: the call still counts.
    for (const planted of [0, 0.0001, -1, '0.0005'] as unknown as number[]) {
      const named = [{ key: 'hero', rewrite_at: at(3).toISOString(), rewrite_cost_usd: planted }, rows[0]!];
      assert.deepEqual(
        (await unrecordedRewrites(store, named)).map((c) => c.at),
        [at(1).toISOString(), at(3).toISOString()],
        `rewrite_cost_usd ${String(planted)}`,
      );
    }
    // A prompt rewritten past the bound keeps its latest calls.
    let latest = await store.latest('a cliff at dusk', ENHANCE);
    for (let i = 0; i < MAX_RECORDED_CALLS + 5; i++) {
      latest = rewriteRecord({
        prompt: 'a cliff at dusk',
        enhance: ENHANCE,
        rewrite: `r${i}`,
        model: 'm',
        paid: { by: 'enhance', replaces: latest! },
      });
    }
    await store.put(latest!);
    assert.equal((await store.latest('a cliff at dusk', ENHANCE))?.calls?.length, MAX_RECORDED_CALLS);
  });

  it('bounds what it keeps of a gateway answer', async () => {
    const store = new RewriteStore(open());
    await store.put(rewriteRecord({ key: 'long', prompt: 'p', enhance: ENHANCE, rewrite: 'x'.repeat(50_000), model: 'y'.repeat(999) }));
    const record = await store.find('p', ENHANCE);
    assert.equal(record?.rewrite?.length, 20_000);
    assert.equal(record?.model.length, 200);
  });
}

describe('rewrite store on a local directory', () => {
  storeContract(() => new LocalStorage(tempDir('reelflow-rewrites-')));

  it('keeps one small JSON file per prompt text under .reelflow/rewrites, without the prompt text or any key', async () => {
    const dir = tempDir('reelflow-rewrites-');
    const store = new RewriteStore(new LocalStorage(dir));
    await store.put(rewriteRecord({ key: 'k', prompt: 'secret-free prompt', enhance: ENHANCE, rewrite: 'r', model: 'm' }));
    const files = readdirSync(join(dir, '.reelflow', 'rewrites'));
    assert.equal(files.length, 1);
    assert.match(files[0]!, /^[0-9a-f]{64}\.json$/);
    const text = readFileSync(join(dir, '.reelflow', 'rewrites', files[0]!), 'utf8');
    assert.ok(!text.includes('secret-free prompt'), 'the prompt is kept as its digest');
    assert.equal(store.location, join(dir, '.reelflow', 'rewrites'));
  });

  it('reads back nothing from an edited, torn or foreign file, and never through a link', async () => {
    const dir = tempDir('reelflow-rewrites-');
    const store = new RewriteStore(new LocalStorage(dir));
    await store.put(rewriteRecord({ key: 'k', prompt: 'p', enhance: ENHANCE, rewrite: 'r', model: 'm' }));
    const [name] = readdirSync(join(dir, '.reelflow', 'rewrites'));
    const path = join(dir, '.reelflow', 'rewrites', name!);
    const good = readFileSync(path, 'utf8');
    writeFileSync(path, good.slice(0, 30));
    assert.equal(await store.latest('p', ENHANCE), undefined, 'torn');
    writeFileSync(path, good.replace(/"prompt_sha256":"[0-9a-f]+"/, `"prompt_sha256":"${promptDigest('other')}"`));
    assert.equal(await store.latest('p', ENHANCE), undefined, 'another prompt than its name says');
    writeFileSync(path, good.replace('"v":2', '"v":9'));
    assert.equal(await store.latest('p', ENHANCE), undefined, 'another version');
    writeFileSync(path, 'x'.repeat(300 * 1024));
    await assert.rejects(store.latest('p', ENHANCE), /more than a record may/);
    // A link where the record belongs is refused, not followed.
    const elsewhere = join(dir, 'elsewhere.json');
    writeFileSync(elsewhere, good);
    const { rmSync } = await import('node:fs');
    rmSync(path);
    symlinkSync(elsewhere, path);
    await assert.rejects(store.latest('p', ENHANCE), /symbolic link/);
    // A record written after the link was planted refuses it, naming it, and writes no byte through it.
    await assert.rejects(
      store.put(rewriteRecord({ key: 'k', prompt: 'p', enhance: ENHANCE, rewrite: 'new', model: 'm' })),
      /symbolic link/,
    );
    assert.equal(readFileSync(elsewhere, 'utf8'), good);
  });

  it('an output directory that cannot hold records says so', async () => {
    const dir = tempDir('reelflow-rewrites-');
    mkdirSync(join(dir, 'out'));
    writeFileSync(join(dir, 'out', '.reelflow'), 'a file where the directory belongs');
    const store = new RewriteStore(new LocalStorage(join(dir, 'out')));
    await assert.rejects(store.latest('p', ENHANCE), /\.reelflow is a file where reelflow needs a folder/);
    await assert.rejects(store.put(rewriteRecord({ key: 'k', prompt: 'p', enhance: ENHANCE, rewrite: 'r', model: 'm' })), /\.reelflow/);
  });
});

for (const kind of s3ServerKinds()) {
  describe(`rewrite store on a real S3 server (${kind})`, () => {
    let server: S3TestServer;
    const bucket = 'rewrites';
    before(async () => {
      server = await startS3Server({ kind });
      await server.createBucket(bucket);
    });
    after(async () => {
      await server?.stop();
    });
    const open = () =>
      new S3Storage(
        {
          bucket,
          prefix: `job-${randomBytes(3).toString('hex')}/`,
          region: server.region,
          endpoint: server.endpoint,
          forcePathStyle: true,
        },
        { credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } },
      );
    storeContract(open);

    it('keeps the records under the prefix, in .reelflow/rewrites/', async () => {
      const storage = open();
      const store = new RewriteStore(storage);
      await store.put(rewriteRecord({ key: 'k', prompt: 'p', enhance: ENHANCE, rewrite: 'r', model: 'm' }));
      assert.equal(store.location, `${storage.location}.reelflow/rewrites`);
      assert.equal((await store.latest('p', ENHANCE))?.rewrite, 'r');
    });
  });
}
