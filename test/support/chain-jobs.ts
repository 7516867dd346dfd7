// Job files of chains of shots for the end-to-end tests (docs/chains.md): one Seedance 2.0 model
// that takes frames, quick polling, output beside the file. Each test gives its items' lines.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ChainJob {
  /** The job's name, and its file's (`<name>.yaml`). */
  name: string;
  baseUrls: readonly string[];
  /** The `items:` entries, as lines of YAML. */
  items: readonly string[];
  /** Lines between `defaults:` and `polling:` (a `models:` block, say). */
  settings?: readonly string[];
  /** `concurrency.max_in_flight`; left out when not given. */
  maxInFlight?: number;
}

/** Shots `<prefix>-1` to `<prefix>-<count>`, each starting from the last frame of the one before. */
export function shotsInARow(prefix: string, count: number, prompt: (k: number) => string): string[] {
  return Array.from({ length: count }, (_, i) => i + 1).flatMap((k) => [
    `  - id: ${prefix}-${k}`,
    `    prompt: "${prompt(k)}"`,
    ...(k > 1 ? ['    references:', `      - image: { last_frame_of: ${prefix}-${k - 1} }`] : []),
  ]);
}

/** Writes the job file into `dir` and returns its path. */
export function writeChainJob(dir: string, job: ChainJob): string {
  const text = [
    'version: 1',
    `name: ${job.name}`,
    'gateway:',
    '  base_urls:',
    ...job.baseUrls.map((u) => `    - ${u}`),
    'defaults:',
    '  model: doubao-seedance-2-0-260128',
    '  seconds: "5"',
    ...(job.settings ?? []),
    ...(job.maxInFlight !== undefined ? [`concurrency:\n  max_in_flight: ${job.maxInFlight}`] : []),
    'polling:\n  initial: 100ms\n  max: 300ms\n  timeout: 5m',
    'output:\n  dir: ./out',
    'items:',
    ...job.items,
    '',
  ].join('\n');
  const path = join(dir, `${job.name}.yaml`);
  writeFileSync(path, text);
  return path;
}
