// `frame_of … at` and `output_of` end to end (docs/chains.md): the CLI runs a job file whose shots
// take a frame at a time of shot 1 and shot 1's whole video, against a real Temporal dev server and
// the simulator over HTTP. What each create carries is compared byte for byte with ffmpeg's own
// decode of the stored shot 1 (media/frames.ts), and with the stored video itself.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { frameAt } from '../../media/frames';
import { runCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir } from '../support/jobs';
import { writeChainJob } from '../support/chain-jobs';

const KEY = 'sk-test-chain-refs-0123456789';
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function refsJob(dir: string, baseUrls: string[]): string {
  const items = [
    '  - id: shot-1',
    '    prompt: "refs opening"',
    '  - id: at-2.5',
    '    prompt: "refs from a frame"',
    '    references:',
    '      - image: { frame_of: shot-1, at: 2.5s }',
    '  - id: extend-1',
    '    prompt: "refs extended"',
    '    references:',
    '      - video: { output_of: shot-1 }',
  ];
  return writeChainJob(dir, { name: 'chain-refs', baseUrls, items, maxInFlight: 4 });
}

describe('reelflow run: frame_of at a time and output_of', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [300, 700], seed: 7 });

  it("a frame at 2.5 s of the stored shot 1 is the dependent's first frame; output_of sends shot 1's stored video", async () => {
    const dir = tempDir();
    const job = refsJob(dir, e2e.sim.urls);
    const ran = await runCli(['run', job], { env: e2e.env });
    assert.equal(ran.code, 0, ran.stdout + ran.stderr);
    const rows = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { key: string; state: string; file: string | null; sha256: string | null });
    const shot1 = rows.find((r) => r.key === 'shot-1' && r.state === 'succeeded');
    assert.ok(shot1?.file, JSON.stringify(rows));
    const stored = join(dir, 'out', shot1.file);
    const content = e2e.sim.stats().contentByPrompt;

    const png = join(dir, 'at-2.5.png');
    await frameAt(stored, 2.5, png);
    const frame = content['refs from a frame']?.at(-1);
    assert.deepEqual(
      frame?.map((c) => c.role),
      ['first_frame'],
      JSON.stringify(frame),
    );
    assert.equal(frame![0]!.sha256, sha256(png), 'the frame at 2.5 s of the stored shot 1, byte for byte');

    const video = content['refs extended']?.at(-1);
    assert.deepEqual(
      video?.map((c) => c.role),
      ['reference_video'],
      JSON.stringify(video),
    );
    assert.equal(video![0]!.sha256, sha256(stored), "shot 1's stored video, byte for byte");
    assert.equal(video![0]!.sha256, shot1.sha256);
  });
});
