// Benchmark: validating and expanding a 10,000-item job file. Baseline: parsing the same YAML alone
// (yaml.parse, no positions, no checks), measured in the same run.
// Last line: {"figure","value","unit","baseline","ratio","target","meets"}.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parse } from 'yaml';
import { loadJobFile } from '../jobfile';
import { median } from './lib/report';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TARGET_MS = 2000;

function jobText(n: number): string {
  const lines = [
    '# yaml-language-server: $schema=../schema/job.schema.json',
    'version: 1',
    'name: bench-10k',
    'gateway:',
    '  base_urls: [http://127.0.0.1:8787, http://127.0.0.1:8788]',
    'defaults:',
    '  model: seedance-1-0-pro-250528',
    '  seconds: "5"',
    '  resolution: 720p',
    '  ratio: "16:9"',
    'models:',
    '  seedance-1-0-pro-250528:',
    '    assets: [image, video, audio]',
    '  veo-3.1-fast-generate-001:',
    '    protocol: openai',
    '    assets: [image]',
    'vars:',
    '  product: the trail runner shoe',
    'items:',
  ];
  for (let i = 0; i < n; i++) {
    if (i % 3 === 0) lines.push(`  - id: shot-${i}`);
    else lines.push('  -');
    lines.push(`    prompt: Shot ${i} of {product}, variation ${i % 97}, camera move ${i % 13}`);
    if (i % 5 === 0) {
      lines.push('    references:', '      - image: ./assets/logo.png', `      - audio: https://cdn.example.com/beat-${i % 7}.mp3`);
    }
    if (i % 10 === 1) lines.push('    model: veo-3.1-fast-generate-001', '    size: 1280x720', '    seconds: 8');
  }
  lines.push('output:', '  dir: ./out/{job}', '  name: "{index:05}-{id}"');
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'reelflow-bench-validate-'));
  try {
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'assets', 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const text = jobText(ITEMS);
    const file = join(dir, 'job.yaml');
    writeFileSync(file, text);
    const loads: number[] = [];
    const parses: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      let t = performance.now();
      parse(text);
      parses.push(performance.now() - t);
      t = performance.now();
      const r = await loadJobFile(file, { runDate: '2025-01-01' });
      loads.push(performance.now() - t);
      if (!r.ok)
        throw new Error(
          `bench job is invalid: ${r.errors
            .slice(0, 3)
            .map((e) => e.message)
            .join('; ')}`,
        );
      if (r.plan.items.length !== ITEMS) throw new Error(`expected ${ITEMS} items, got ${r.plan.items.length}`);
    }
    const value = Math.round(median(loads));
    const baseline = Math.round(median(parses));
    process.stdout.write(
      `validate ${ITEMS} items (${(text.length / 1024).toFixed(0)} KiB): runs ${loads.map((x) => x.toFixed(0)).join(', ')} ms; ` +
        `yaml.parse alone ${parses.map((x) => x.toFixed(0)).join(', ')} ms\n`,
    );
    process.stdout.write(
      `${JSON.stringify({
        figure: `validate a ${ITEMS}-item job file (median of ${RUNS})`,
        value,
        unit: 'ms',
        baseline,
        ratio: baseline > 0 ? Number((value / baseline).toFixed(2)) : null,
        target: TARGET_MS,
        meets: value < TARGET_MS,
      })}\n`,
    );
  } finally {
    if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
    else process.stdout.write(`kept ${dir}\n`);
  }
}

void main();
