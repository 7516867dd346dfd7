// reelflow itself (the built CLI, a real Temporal dev server) through the real new-api v0.10.0
// (scripts/new-api.sh), in front of the project's fake upstream. new-api picks the protocol by
// channel (test/gateways/OBSERVED.md): Seedance (type 54) tasks over the general protocol, whose
// video is on the upstream's file host (a CDN to reelflow); Veo 3.1 tasks of its Gemini channel
// (type 24) over the openai protocol, and over the general protocol too, where the finished task names
// `{ServerAddress}/v1/videos/{id}/content`: another host name, which reelflow must reach through
// its own base addresses. Messages go through the Anthropic channel (type 14). As with LiteLLM, the
// main job runs past a dead first base address through a lossy proxy (one create's answer lost, one
// download cut short). new-api refreshes tasks from the upstream every 15 s, so each run lasts
// about that long at least.
// Build first: bash scripts/build.sh
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, type CliResult } from '../support/cli';
import { enhanced, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import {
  GATEWAY_MODELS,
  closedBaseUrl,
  filesContaining,
  manifestRows,
  rowOf,
  startLossyProxy,
  startNewApi,
  upstreamMessages,
  upstreamRequestsWithKey,
  writeGatewayJob,
  type GatewayJobItem,
  type Gateway,
  type LossyProxy,
} from '../support/gateways';
import { sha256File } from '../support/media';
import { tempDir } from '../support/jobs';
import { startTestTemporal, type TestTemporal } from '../support/temporal';

/** Markers in a prompt that make the proxy lose the first create answer carrying them. */
const LOSE_SAFE = '[lose:safe]';
const LOSE_ALWAYS = '[lose:always]';
/** A ServerAddress on a host name the client never uses (and that does not resolve). */
const OTHER_HOST = 'http://new-api.test:3000';

/** Seedance over the general protocol by default; Veo 3.1 Fast over the openai protocol unless an item says otherwise. */
function writeJob(dir: string, name: string, baseUrls: string[], items: GatewayJobItem[], extra: string[] = []): string {
  return writeGatewayJob(dir, {
    name,
    baseUrls,
    defaults: [
      `model: ${GATEWAY_MODELS.general}`,
      'protocol: general',
      'seconds: "5"',
      'resolution: 720p',
      'ratio: "16:9"',
      'size: 1280x720',
    ],
    items,
    extra: ['models:', `  ${GATEWAY_MODELS.openai}:`, '    protocol: openai', '    seconds: "8"', ...extra],
  });
}

/** One item per channel and protocol: Seedance (general), Veo (openai), Veo over the general protocol. */
function channelItems(tag: string): GatewayJobItem[] {
  return [
    { id: 'seedance', prompt: `${tag}: a lighthouse on a cliff at dusk` },
    { id: 'veo', prompt: `${tag}: a keeper climbing the spiral stairs`, model: GATEWAY_MODELS.openai },
    { id: 'veo-general', prompt: `${tag}: a lamp turning in the fog`, model: GATEWAY_MODELS.openai, protocol: 'general' },
  ];
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * Checks the rows of the channel items: succeeded, one paid create each of the enhanced prompt,
 * the upstream's bytes, and each video fetched from where it may be: a Veo video only through the
 * job's base addresses (`bases`), whatever host the gateway named.
 */
function assertChannelItems(
  dir: string,
  items: GatewayJobItem[],
  upstream: FakeUpstream,
  bases: string[],
  diagnostic: (message: string) => void,
): void {
  const out = join(dir, 'out');
  const rows = manifestRows(out);
  for (const item of items) {
    const row = rowOf(rows, item.id, 'succeeded');
    assert.equal(row.enhanced_prompt, enhanced(item.prompt), item.id);
    assert.equal(upstream.createsFor(enhanced(item.prompt)), 1, `${item.id}: one paid create`);
    assert.equal(sha256File(join(out, row.file!)), sha256(upstream.video), item.id);
    assert.equal(row.sha256, sha256(upstream.video), item.id);
    assert.ok(bases.includes(row.create_base_url ?? ''), `${item.id} created on ${row.create_base_url}`);
    // A Seedance video may come from the upstream's file host (the address new-api reports) or
    // through new-api's content endpoint; a Veo video only ever through the base addresses.
    const servedBy = item.model === GATEWAY_MODELS.openai ? bases : [upstream.url, ...bases];
    assert.ok(servedBy.includes(row.download_base_url ?? ''), `${item.id} downloaded from ${row.download_base_url}`);
    diagnostic(`${item.id}: created on ${row.create_base_url}, downloaded from ${row.download_base_url}`);
  }
  assert.deepEqual(
    readdirSync(out).filter((f) => f.endsWith('.part')),
    [],
  );
}

describe('reelflow through new-api v0.10.0', { timeout: 900_000 }, () => {
  let temporal: TestTemporal;
  let upstream: FakeUpstream;
  const outputs: CliResult[] = [];
  let env: NodeJS.ProcessEnv;
  const run = async (args: string[], keyEnv: NodeJS.ProcessEnv) => {
    const result = await runCli(args, { env: { ...env, ...keyEnv } });
    outputs.push(result);
    return result;
  };

  before(async () => {
    [temporal, upstream] = await Promise.all([startTestTemporal(), startFakeUpstream({ renderMs: 1000 })]);
    env = temporal.env;
  });
  after(async () => {
    await upstream?.stop();
    await temporal?.stop();
  });

  describe(`ServerAddress ${OTHER_HOST}, behind a lossy proxy and a dead primary`, () => {
    let gateway: Gateway;
    let proxy: LossyProxy;
    let dead: string;
    let dir: string;
    let job: string;
    let keyEnv: NodeJS.ProcessEnv;
    const items = [...channelItems('other-host'), { id: 'lost', prompt: `other-host: a gull over the harbour ${LOSE_SAFE}` }];

    before(async () => {
      gateway = await startNewApi(upstream, { serverAddress: OTHER_HOST });
      proxy = await startLossyProxy(gateway.url, { loseCreates: [LOSE_SAFE, LOSE_ALWAYS], cutDownloads: 1 });
      dead = await closedBaseUrl();
      keyEnv = { GATEWAY_API_KEY: gateway.key };
      dir = tempDir('reelflow-new-api-e2e-');
      job = writeJob(dir, 'newapi', [dead, proxy.url], items);
    });
    after(async () => {
      await proxy?.stop();
      await gateway?.stop();
    });

    it('doctor passes the job: the dead primary is a warning, both routes and Messages answer', async () => {
      const result = await run(['doctor', job], keyEnv);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.doesNotMatch(result.stdout, /^FAIL/m, result.stdout);
      assert.match(result.stdout, new RegExp(`^warn\\s+gateway ${dead} \\(primary\\): .*connection refused`, 'm'), result.stdout);
      assert.match(result.stdout, new RegExp(`^ok\\s+gateway ${proxy.url} \\(alternate 1\\)`, 'm'), result.stdout);
      assert.match(result.stdout, /^ok\s+messages: /m, result.stdout);
      assert.equal(upstream.createCount(), 0, 'doctor creates nothing');
    });

    it("a model not in the key's catalog: run exits 2 before any paid call, naming the model, its line and the closest names", async () => {
      const messagesBefore = upstreamMessages(upstream);
      const createsBefore = upstream.createCount();
      const wrong = writeGatewayJob(dir, {
        name: 'newapi-wrong-model',
        baseUrls: [dead, proxy.url],
        defaults: ['model: seedance-1.0-pro', 'seconds: "5"'],
        items: [{ id: 'never', prompt: 'never rendered' }],
      });
      const result = await run(['run', wrong], keyEnv);
      assert.equal(result.code, 2, result.stdout + result.stderr);
      assert.match(
        result.stderr,
        /model "seedance-1\.0-pro" is not in the gateway's catalog for this key \(GET \/v1\/models on http:\/\/127\.0\.0\.1:\d+ lists 3 models\)/,
      );
      assert.match(result.stderr, /newapi-wrong-model\.yaml:8:10 \(defaults\.model\); closest in the catalog: seedance-1-0-pro-250528, /);
      assert.equal(upstream.createCount(), createsBefore, 'no create reached the upstream');
      assert.equal(upstreamMessages(upstream), messagesBefore, 'no Messages call reached the upstream');
      // A key new-api does not know: refused before anything is started.
      const refused = await run(['run', wrong], { GATEWAY_API_KEY: 'sk-not-a-new-api-token-000000000000' });
      assert.equal(refused.code, 2, refused.stdout + refused.stderr);
      assert.match(refused.stderr, /the gateway refused the key in GATEWAY_API_KEY \(GET \/v1\/models on .*: HTTP 401: 无效的令牌/);
      assert.equal(upstream.createCount(), createsBefore);
    });

    it('runs the job: both protocols and channels, enhanced, past the dead primary; the lost create ends unknown', async (t) => {
      const result = await run(['run', job], keyEnv);
      assert.equal(result.code, 1, `one item ends unknown:\n${result.stdout}${result.stderr}`);
      assert.match(result.stdout, /newapi: 3 of 4 succeeded/);
      assert.match(result.stdout, /unknown\s+#4 lost/);
      assert.deepEqual(proxy.lost, [LOSE_SAFE], 'the proxy lost exactly the marked create answer');
      // One video was cut off halfway; new-api ignores Range, so the retry had the whole file again.
      assert.equal(proxy.cut.length, 1, 'a download was cut short');
      assertChannelItems(dir, channelItems('other-host'), upstream, [proxy.url], (m) => t.diagnostic(m));
      // The Seedance channel sends Ark only the model and the prompt: seconds, resolution and ratio are dropped.
      const seedance = upstream.requests.find((r) => r.method === 'POST' && r.body.includes(enhanced(items[0]!.prompt)));
      assert.deepEqual(JSON.parse(seedance?.body ?? '{}'), {
        model: GATEWAY_MODELS.general,
        content: [{ type: 'text', text: enhanced(items[0]!.prompt) }],
      });
      // new-api created the task and the upstream was paid; reelflow does not create it again on its own.
      const lost = rowOf(manifestRows(join(dir, 'out')), 'lost', 'unknown');
      t.diagnostic(`lost create: ${lost.error?.kind}: ${lost.error?.message}`);
      t.diagnostic(
        `cut: ${proxy.cut.join(', ')}; through the proxy with Range: ${proxy.passed.filter((p) => p.includes('(')).join(', ') || 'none'}`,
      );
      assert.equal(lost.file, null);
      assert.equal(upstream.createsFor(enhanced(items[3]!.prompt)), 1);
      assert.equal(upstream.createCount(), 4);
    });

    it('--retry-unknown creates the lost item again, once; then a re-run creates nothing', async () => {
      const retried = await run(['run', job, '--retry-unknown'], keyEnv);
      assert.equal(retried.code, 0, retried.stdout + retried.stderr);
      assert.match(retried.stderr, /newapi: started 1 of 4 item\(s\) \(3 already ended\)/);
      const out = join(dir, 'out');
      const row = rowOf(manifestRows(out), 'lost', 'succeeded');
      assert.equal(sha256File(join(out, row.file!)), sha256(upstream.video));
      assert.equal(upstream.createsFor(enhanced(items[3]!.prompt)), 2, 'the user chose to pay for it again');

      const creates = upstream.createCount();
      const again = await run(['run', job], keyEnv);
      assert.equal(again.code, 0, again.stdout + again.stderr);
      assert.match(again.stderr, /newapi: nothing to render: all 4 item\(s\) already ended/);
      assert.match(again.stdout, /4 of 4 succeeded/);
      assert.equal(upstream.createCount(), creates, 'no create on a finished job');
    });

    it('every finished video deleted: run again asks each task it has (both channels), downloads again, creates nothing (docs/reruns.md)', async () => {
      const out = join(dir, 'out');
      const before = manifestRows(out);
      for (const row of before.values()) rmSync(join(out, row.file!));
      const creates = upstream.createCount();
      const again = await run(['run', job], keyEnv);
      assert.equal(again.code, 0, again.stdout + again.stderr);
      assert.match(again.stderr, /newapi: started 4 of 4 item\(s\)/);
      assert.equal(upstream.createCount(), creates, 'no create: every paid task was asked again');
      const after = manifestRows(out);
      for (const [key, row] of before) {
        const now = rowOf(after, key, 'succeeded');
        assert.equal(now.task_id, row.task_id, `${key}: the same task`);
        assert.equal(sha256File(join(out, now.file!)), sha256(upstream.video));
      }
    });

    it('with retries.create: always, the lost create is created again in the same run and the job succeeds', async () => {
      const prompt = `other-host: a storm front over the sea ${LOSE_ALWAYS}`;
      // Another job: an output location of its own (an output location belongs to one job, docs/reruns.md).
      const alwaysDir = join(dir, 'always');
      mkdirSync(alwaysDir);
      const always = writeJob(alwaysDir, 'newapi-always', [dead, proxy.url], [{ id: 'storm', prompt }], ['retries:', '  create: always']);
      const result = await run(['run', always], keyEnv);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.ok(proxy.lost.includes(LOSE_ALWAYS));
      assert.equal(upstream.createsFor(enhanced(prompt)), 2, 'the lost create and the one made again');
      assert.equal(rowOf(manifestRows(join(alwaysDir, 'out')), 'storm', 'succeeded').sha256, sha256(upstream.video));
    });

    it('the key reached only the gateway: not the upstream, not its file host, no file, log or workflow history', () => {
      assert.deepEqual(upstreamRequestsWithKey(upstream, gateway.key), []);
      const files = upstream.requests.filter((r) => r.path.startsWith('/files/'));
      assert.ok(files.length > 0, 'Seedance videos were fetched from the file host');
      for (const request of files) assert.equal(request.headers.authorization, undefined, `${request.path} got an Authorization header`);
      for (const output of outputs) assert.ok(!output.stdout.includes(gateway.key) && !output.stderr.includes(gateway.key));
      assert.deepEqual(filesContaining(dir, gateway.key), []);
      assert.deepEqual(filesContaining(temporal.stateDir, gateway.key), []);
      // The scan reads what it must: the prompts are in the manifest and in the recorded histories.
      assert.ok(filesContaining(dir, items[0]!.prompt).some((f) => f.endsWith('manifest.jsonl')));
      assert.ok(filesContaining(temporal.stateDir, items[0]!.prompt).length > 0, 'the workflow histories are scanned');
    });
  });

  describe("new-api's default ServerAddress (http://localhost:3000), as a fresh install runs", () => {
    let gateway: Gateway;
    let trap: { server: Server; hits: string[] } | undefined;

    before(async () => {
      gateway = await startNewApi(upstream);
      // The finished Veo task names http://localhost:3000/...: anything listening there must get
      // nothing from reelflow, least of all the key. Port 3000 may be taken on a shared machine;
      // then the run's success alone shows the address was not used.
      trap = await listenOn3000();
    });
    after(async () => {
      await gateway?.stop();
      await new Promise((r) => (trap ? trap.server.close(r) : r(undefined)));
    });

    it('renders one item per channel and protocol, each video fetched through the base address or the file host', async (t) => {
      const dir = tempDir('reelflow-new-api-default-');
      const items = channelItems('default-address');
      const job = writeJob(dir, 'newapi-default', [gateway.url], items);
      const result = await run(['run', job], { GATEWAY_API_KEY: gateway.key });
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assertChannelItems(dir, items, upstream, [gateway.url], (m) => t.diagnostic(m));
      if (trap) assert.deepEqual(trap.hits, [], 'nothing was sent to http://localhost:3000');
      assert.deepEqual(upstreamRequestsWithKey(upstream, gateway.key), []);
      assert.deepEqual(filesContaining(dir, gateway.key), []);

      const creates = upstream.createCount();
      const again = await run(['run', job], { GATEWAY_API_KEY: gateway.key });
      assert.equal(again.code, 0, again.stdout + again.stderr);
      assert.match(again.stderr, /newapi-default: nothing to render: all 3 item\(s\) already ended/);
      assert.equal(upstream.createCount(), creates);
    });
  });
});

/** A server on 127.0.0.1:3000 that records what reaches it, or undefined when the port is taken. */
async function listenOn3000(): Promise<{ server: Server; hits: string[] } | undefined> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(418).end();
  });
  return new Promise((resolveListen) => {
    server.once('error', () => resolveListen(undefined));
    server.listen(3000, '127.0.0.1', () => resolveListen({ server, hits }));
  });
}
