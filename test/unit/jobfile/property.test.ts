// Random mutations of valid job files: the loader never throws, and always answers with a plan or
// with errors that carry a position and a message.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseJobFile } from '../../../jobfile';
import { BAD_CASES } from './bad-cases';

const JOBS = join(__dirname, '..', '..', '..', 'jobs');
const seeds = ['demo.yaml', 'references.yaml', 'matrix.yaml', 'openai-protocol.yaml', 'scheduled.yaml', 's3.yaml', 'from-csv.yaml'].map(
  (f) => ({ path: join(JOBS, f), text: readFileSync(join(JOBS, f), 'utf8') }),
);
const fragments = [
  '{',
  '}',
  '[',
  ']',
  ':',
  '- ',
  '"',
  "'",
  '\n',
  '  ',
  '#',
  '&a',
  '*a',
  '<<: ',
  '{index:03}',
  '{nope}',
  '..',
  '/',
  'sk-abcdefghijklmnopqrstu',
  'seconds: five',
  'ratio: 16:9',
  'size: 1x1',
  'protocol: openai',
  'model: veo-3.1-fast-generate-001',
  '\t',
  '\u0000',
  'null',
  '~',
  '2h',
  '-1',
  '99999999999999999999',
  'image: ./nope.png',
  'items: []',
  'matrix:\n  ratio: []\n',
];

type Edit = { kind: 'insert' | 'delete' | 'replace'; at: number; len: number; text: string };
const edit: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom('insert', 'delete', 'replace'),
  at: fc.nat(),
  len: fc.integer({ min: 1, max: 12 }),
  text: fc.oneof(fc.constantFrom(...fragments), fc.string({ maxLength: 8 })),
});

function apply(text: string, e: Edit): string {
  const at = text.length === 0 ? 0 : e.at % (text.length + 1);
  if (e.kind === 'insert') return text.slice(0, at) + e.text + text.slice(at);
  if (e.kind === 'delete') return text.slice(0, at) + text.slice(at + e.len);
  return text.slice(0, at) + e.text + text.slice(at + e.len);
}

function swapLines(text: string, a: number, b: number): string {
  const lines = text.split('\n');
  const i = a % lines.length;
  const j = b % lines.length;
  [lines[i], lines[j]] = [lines[j] as string, lines[i] as string];
  return lines.join('\n');
}

function check(text: string, path: string): void {
  const r = parseJobFile(text, path, { runDate: '2025-01-01' });
  if (r.ok) {
    assert.ok(r.plan.items.length > 0);
    for (const item of r.plan.items) {
      assert.ok(item.key.length > 0);
      assert.ok(!item.outputName.split('/').includes('..'));
    }
    return;
  }
  assert.ok(r.errors.length > 0, 'an invalid file has at least one error');
  for (const e of r.errors) {
    assert.ok(Number.isInteger(e.line) && e.line >= 1, `line ${e.line}: ${e.message}`);
    assert.ok(Number.isInteger(e.column) && e.column >= 1, `column ${e.column}: ${e.message}`);
    assert.ok(e.message.length > 0 && !e.message.includes('\u0000'), `message ${JSON.stringify(e.message)}`);
    assert.doesNotMatch(e.message, /sk-abcdefghijklmnopqrstu/);
  }
}

describe('property: the loader never throws', () => {
  it('random edits of the example jobs', () => {
    fc.assert(
      fc.property(fc.constantFrom(...seeds), fc.array(edit, { minLength: 1, maxLength: 4 }), (seed, edits) => {
        check(edits.reduce(apply, seed.text), seed.path);
      }),
      { numRuns: 400 },
    );
  });

  it('random line swaps of the example jobs', () => {
    fc.assert(
      fc.property(fc.constantFrom(...seeds), fc.nat(), fc.nat(), (seed, a, b) => {
        check(swapLines(seed.text, a, b), seed.path);
      }),
      { numRuns: 200 },
    );
  });

  it('random edits of the malformed cases', () => {
    const texts = BAD_CASES.map((c) => c.yaml);
    fc.assert(
      fc.property(fc.constantFrom(...texts), fc.array(edit, { maxLength: 3 }), (text, edits) => {
        check(edits.reduce(apply, text), join(JOBS, 'mutant.yaml'));
      }),
      { numRuns: 300 },
    );
  });

  it('arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => check(text, join(JOBS, 'random.yaml'))),
      { numRuns: 300 },
    );
  });
});
