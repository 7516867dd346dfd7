// Every downloaded file is its own item's video: through the CLI, Temporal and the simulator, each
// item's file has that item's ratio and seconds, and no two items share a file, even two of one size (docs/simulator.md).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../support/cli';
import { useTemporalAndSimulator } from '../support/e2e';
import { tempDir } from '../support/jobs';
import { probeVideoSize } from '../support/media';

const KEY = 'sk-test-e2e-sim-videos-0123456789';

const ITEMS = [
  { id: 'harbor', prompt: 'A slow aerial drift over a quiet harbor at dawn', ratio: '16:9', seconds: '5', size: '852x480' },
  { id: 'rain', prompt: 'Close-up of rain running down a window at night', ratio: '9:16', seconds: '3', size: '480x852' },
  { id: 'dune', prompt: 'Wind sweeping sand across a dune ridge', ratio: '1:1', seconds: '4', size: '480x480' },
  // Same ratio and length as harbor: only the prompt tells them apart.
  { id: 'neon', prompt: 'Neon signs blurred behind a rainy street', ratio: '16:9', seconds: '5', size: '852x480' },
];

describe('simulated videos follow their items (embedded Temporal, real simulator)', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [300, 900], seed: 11 });

  it('each file has its own item ratio and length, and no two files are the same', async () => {
    const dir = tempDir();
    const job = join(dir, 'looks.yaml');
    writeFileSync(
      job,
      [
        'version: 1',
        'name: looks',
        'gateway:',
        '  base_urls:',
        ...e2e.sim.urls.map((u) => `    - ${u}`),
        'defaults:',
        '  model: seedance-1-0-pro-250528',
        '  resolution: 480p',
        'polling:\n  initial: 500ms\n  max: 2s\n  timeout: 5m',
        'output:\n  dir: ./out',
        'items:',
        ...ITEMS.flatMap((i) => [
          `  - id: ${i.id}`,
          `    prompt: ${JSON.stringify(i.prompt)}`,
          `    ratio: "${i.ratio}"`,
          `    seconds: "${i.seconds}"`,
        ]),
        '',
      ].join('\n'),
    );
    const result = await runCli(['run', job], { env: e2e.env });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    const rows = readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; file: string; sha256: string });
    assert.equal(rows.length, ITEMS.length);
    for (const item of ITEMS) {
      const row = rows.find((r) => r.id === item.id);
      assert.ok(row, `a manifest row for ${item.id}`);
      const video = probeVideoSize(join(dir, 'out', row.file));
      assert.equal(`${video.width}x${video.height}`, item.size, `${item.id}: ${item.ratio} at 480p`);
      assert.equal(video.seconds, Number(item.seconds), `${item.id}: ${item.seconds} s`);
    }
    assert.equal(new Set(rows.map((r) => r.sha256)).size, ITEMS.length, 'one file per item');
  });
});
