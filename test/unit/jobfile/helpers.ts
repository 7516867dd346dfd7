// Test helpers: job files written to a fresh temp dir, loaded with a fixed run date.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after } from 'node:test';
import { loadJobFile, type LoadResult } from '../../../jobfile';
import type { Plan } from '../../../jobfile/plan';

export const RUN_DATE = '2025-03-14';

const made: string[] = [];
// Each test file that makes job directories removes them when it ends.
after(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Writes `files` (name -> content) into a new temp dir, removed when the test file ends; returns the dir. */
export function tempJobDir(files: Record<string, string | Buffer> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'reelflow-jobfile-'));
  made.push(dir);
  for (const [name, content] of Object.entries(files)) {
    const path = join(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
  return dir;
}

/** Loads `yaml` as `job.yaml` in a temp dir that also holds `files` and assets/logo.png. */
export async function load(yaml: string, files: Record<string, string | Buffer> = {}): Promise<LoadResult & { dir: string }> {
  const dir = tempJobDir({ 'job.yaml': yaml, 'assets/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]), ...files });
  const result = await loadJobFile(join(dir, 'job.yaml'), { runDate: RUN_DATE });
  return { ...result, dir };
}

export async function plan(yaml: string, files: Record<string, string | Buffer> = {}): Promise<Plan> {
  const r = await load(yaml, files);
  if (!r.ok) throw new Error(`expected a valid job file, got:\n${r.errors.map((e) => `${e.line}:${e.column}: ${e.message}`).join('\n')}`);
  return r.plan;
}

/** `line:column: message` of every error (file names left out). */
export async function errorsOf(yaml: string, files: Record<string, string | Buffer> = {}): Promise<string[]> {
  const r = await load(yaml, files);
  if (r.ok) return [];
  return r.errors.map(
    (e) => `${e.file.endsWith('job.yaml') ? '' : `${e.file.split('/').pop() ?? ''}:`}${e.line}:${e.column}: ${e.message}`,
  );
}

/** A minimal valid head: name, gateway, defaults (lines 1-5); items follow from line 6. */
export const HEAD = `name: t
gateway:
  base_urls: [http://127.0.0.1:8787]
defaults:
  model: seedance-1-0-pro-250528
`;
