// A chain through a gateway that hands back each shot's last frame (docs/chains.md, "The frame a
// shot starts from"): the simulator imitating new-api in front of Seedance answers a create that
// asked `return_last_frame` with `content.last_frame_url`, a signed PNG on its file host. reelflow
// fetches it (without the key) and stores it when the shot succeeds; each dependent's create then
// carries that PNG byte for byte, not a frame made again from the stored video.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir } from '../support/jobs';
import { shotsInARow, writeChainJob } from '../support/chain-jobs';

const KEY = 'sk-test-chain-gateway-frame-0123456789';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function chainJob(dir: string, baseUrls: string[]): string {
  const items = shotsInARow('gf', 3, (k) => `gateway frame ${k}`);
  return writeChainJob(dir, { name: 'chain-gateway-frame', baseUrls, items, maxInFlight: 4 });
}

describe('reelflow run: a chain through a gateway that returns last frames', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [300, 700], seed: 7, profile: 'new-api', refreshMs: 0 });

  it("each dependent's first frame is byte for byte the PNG the shot before's gateway returned", async () => {
    const dir = tempDir();
    const result = await runCli(['run', chainJob(dir, e2e.sim.urls)], { env: e2e.env });
    assert.equal(result.code, 0, result.stderr);
    const rows = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { key: string; state: string; task_id: string });
    const taskOf = new Map(rows.map((r) => [r.key, r.task_id]));
    const content = e2e.sim.stats().contentByPrompt;
    for (const k of [2, 3]) {
      // What the gateway says of the shot before now: its last frame's address, fetched as a provider address is (no key).
      const status = (await (
        await fetch(`${e2e.sim.urls[0]}/v1/video/generations/${taskOf.get(`gf-${k - 1}`)}`, { headers: { authorization: `Bearer ${KEY}` } })
      ).json()) as { data?: { data?: { content?: { last_frame_url?: string } } } };
      const address = status.data?.data?.content?.last_frame_url;
      assert.ok(address, `the gateway returned a last frame for gf-${k - 1}: ${JSON.stringify(status).slice(0, 300)}`);
      const png = Buffer.from(await (await fetch(address)).arrayBuffer());
      assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
      const sent = content[`gateway frame ${k}`]!.at(-1)!.find((c) => c.role === 'first_frame');
      assert.equal(sent?.sha256, sha256(png), `gf-${k} starts from the frame the gateway returned for gf-${k - 1}`);
    }
    assert.equal(e2e.sim.stats().cdnAuthHeadersSeen, 0, 'the key never went to the file host');
  });
});
