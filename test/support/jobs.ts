// Job files written into a temporary directory for a test.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const madeHere: string[] = [];

function removeMadeHere(): void {
  for (const dir of madeHere) rmSync(dir, { recursive: true, force: true });
}

/**
 * A fresh directory under the system's temporary folder, removed when the test process exits (a
 * whole suite left ~250 behind, with their videos). `keep` leaves it for the test to decide (the
 * chaos test keeps a failed run's); REELFLOW_KEEP_TEST_DIRS=1 keeps them all, for a look.
 */
export function tempDir(prefix = 'reelflow-test-', options: { keep?: boolean } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (!options.keep && process.env.REELFLOW_KEEP_TEST_DIRS !== '1') {
    if (madeHere.length === 0) process.once('exit', removeMadeHere);
    madeHere.push(dir);
  }
  return dir;
}

export interface JobSpec {
  name: string;
  baseUrls: string[];
  /** `lines`: more of the item's YAML, as written under it (e.g. `references:` and its entries). */
  items: Array<{ id?: string; prompt: string; model?: string; lines?: string[] }>;
  extra?: string;
  polling?: string;
  maxInFlight?: number;
  /** defaults.model; seedance-1-0-pro-250528 unless given. */
  model?: string;
  /** output.dir; ./out unless given. */
  outputDir?: string;
}

/** Writes a job file whose outputs go to `<dir>/out` (or `outputDir`); returns its path. */
export function writeJob(dir: string, spec: JobSpec): string {
  const items = spec.items
    .map((i) =>
      [
        `  - prompt: ${JSON.stringify(i.prompt)}`,
        ...(i.id ? [`    id: ${i.id}`] : []),
        ...(i.model ? [`    model: ${i.model}`] : []),
        ...(i.lines ?? []).map((line) => `    ${line}`),
      ].join('\n'),
    )
    .join('\n');
  const text = [
    'version: 1',
    `name: ${spec.name}`,
    'gateway:',
    '  base_urls:',
    ...spec.baseUrls.map((u) => `    - ${u}`),
    'defaults:',
    `  model: ${spec.model ?? 'seedance-1-0-pro-250528'}`,
    '  seconds: "5"',
    `concurrency:\n  max_in_flight: ${spec.maxInFlight ?? 10}`,
    spec.polling ?? 'polling:\n  initial: 500ms\n  max: 2s\n  timeout: 5m',
    `output:\n  dir: ${spec.outputDir ?? './out'}`,
    spec.extra ?? '',
    'items:',
    items,
    '',
  ].join('\n');
  const path = join(dir, `${spec.name}.yaml`);
  writeFileSync(path, text);
  return path;
}
