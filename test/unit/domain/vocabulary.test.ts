// The shared vocabulary lives in domain/ and nowhere else: a source file outside it that writes
// out a job-wide cause, a failure kind of reelflow's own, or a list of end states has started a copy
// that can drift (as enhance's list of job-wide causes and the progress bar's sum of end states
// did). Reads every source file's syntax tree: string literals, not comments.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { END_STATES } from '../../../domain/end-states';
import { FailureType, GatewayFailure, JOB_WIDE_CAUSES } from '../../../domain/failures';

const ROOT = join(__dirname, '..', '..', '..');
/** The layers (eslint.config.mjs LAYERS) but domain/; sim/ speaks the gateways' words, not reelflow's. */
const FOLDERS = ['jobfile', 'gateway', 'storage', 'media', 'activities', 'workflows', 'worker', 'client', 'cli'];

/**
 * Literals that are a gateway's own words on the wire, not reelflow's: the seed's service answers
 * `task_not_found` as an error code (gateway/dialects/seed.ts).
 */
const GATEWAY_WORDS: ReadonlyMap<string, ReadonlySet<string>> = new Map([['gateway/dialects/seed.ts', new Set(['task_not_found'])]]);

const endStates: ReadonlySet<string> = new Set(END_STATES);
const jobWide: ReadonlySet<string> = new Set(Object.keys(JOB_WIDE_CAUSES));
/** Kinds no other vocabulary shares: reelflow's own snake_case names that are not end states. */
const ownKinds: ReadonlySet<string> = new Set(Object.values(FailureType).filter((k) => k.includes('_') && !endStates.has(k)));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

interface Finding {
  file: string;
  line: number;
  text: string;
}

/** Every string literal (and literal type) of `file`, and every list (array, union, call arguments) of them. */
function scan(path: string): { literals: Array<Finding & { value: string }>; lists: Array<Finding & { values: string[] }> } {
  const file = relative(ROOT, path);
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const literals: Array<Finding & { value: string }> = [];
  const lists: Array<Finding & { values: string[] }> = [];
  const at = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const strings = (nodes: readonly ts.Node[]) =>
    nodes.flatMap((n) => {
      const literal = ts.isLiteralTypeNode(n) ? n.literal : n;
      return ts.isStringLiteral(literal) ? [literal.text] : [];
    });
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) && !ts.isImportDeclaration(node.parent) && !ts.isExportDeclaration(node.parent)) {
      literals.push({ file, line: at(node), text: node.getText(), value: node.text });
    }
    const members = ts.isArrayLiteralExpression(node)
      ? node.elements
      : ts.isUnionTypeNode(node)
        ? node.types
        : ts.isCallExpression(node)
          ? node.arguments
          : undefined;
    if (members) lists.push({ file, line: at(node), text: node.getText().slice(0, 120), values: strings(members) });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { literals, lists };
}

const scanned = FOLDERS.flatMap((folder) => sourceFiles(join(ROOT, folder))).map(scan);

describe('the shared vocabulary is written in domain/ only', () => {
  it('no job-wide cause and no failure kind of reelflow is spelled out elsewhere', () => {
    const found = scanned
      .flatMap((s) => s.literals)
      .filter((l) => (jobWide.has(l.value) || ownKinds.has(l.value)) && !GATEWAY_WORDS.get(l.file)?.has(l.value))
      .map((l) => `${l.file}:${l.line} ${l.text}`);
    assert.deepEqual(found, [], 'use FailureType or JOB_WIDE_CAUSES from domain/failures.ts');
  });

  it('no list of end states is written elsewhere', () => {
    const found = scanned
      .flatMap((s) => s.lists)
      // Three or more, all end states: a gateway's task statuses and a job's outcomes share some words.
      .filter((l) => l.values.length >= 3 && l.values.every((v) => endStates.has(v)))
      .map((l) => `${l.file}:${l.line} ${l.text}`);
    assert.deepEqual(found, [], 'use END_STATES or RENDER_END_STATES from domain/end-states.ts');
  });

  it('the scan sees what it looks for: the gateway kinds are among the kinds it refuses', () => {
    assert.ok(scanned.length > 100, `${scanned.length} files`);
    for (const kind of Object.values(GatewayFailure)) if (kind.includes('_')) assert.ok(ownKinds.has(kind), kind);
    for (const kind of Object.keys(JOB_WIDE_CAUSES)) assert.ok(jobWide.has(kind), kind);
  });
});
