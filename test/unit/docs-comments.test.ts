// Comments say the fact or cite the project's own docs (docs/, ARCHITECTURE.md, BENCHMARKS.md), never
// an issue number or a file outside the repository: a reader of the code has neither the tracker nor
// the files beside the checkout.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

const root = join(__dirname, '..', '..');
const SKIPPED = new Set(['node_modules', 'dist', 'test-output', '.git']);
const CODE = /\.(ts|mjs|sh)$/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIPPED.has(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return CODE.test(name) ? [path] : [];
  });
}

/** The comment text of a line, or undefined: `//`, `/*` and ` * ` lines in code, `#` lines in shell. */
function commentOf(line: string, shell: boolean): string | undefined {
  const trimmed = line.trimStart();
  if (shell) return trimmed.startsWith('#') ? trimmed : undefined;
  if (/^(\/\/|\/\*|\*)/.test(trimmed)) return trimmed;
  const trailing = line.indexOf(' // ');
  return trailing >= 0 ? line.slice(trailing) : undefined;
}

const CITATIONS: Array<[RegExp, string]> = [
  [/\b[Ii]ssues? #?\d+/, 'an issue number'],
  [/(^|[\s(,;])#\d+ items?\b/, 'an issue number'],
  [/\.\.\/shared\b|\/work\/shared\b/, 'a file outside the repository'],
];

describe('comments', () => {
  it('cite no issue number and no file outside the repository', () => {
    const found: string[] = [];
    for (const file of sources(root)) {
      const shell = file.endsWith('.sh');
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const comment = commentOf(line, shell);
          if (comment === undefined) return;
          for (const [pattern, what] of CITATIONS) {
            if (pattern.test(comment)) found.push(`${relative(root, file)}:${i + 1}: ${what}: ${comment.trim()}`);
          }
        });
    }
    assert.deepEqual(found, [], `comments that cite outside the code:\n${found.join('\n')}`);
  });
});
