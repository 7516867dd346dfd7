// The small pure parts: CSV, durations, base addresses, placeholders, keys (cron: cron.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csvRows, parseCsvCells } from '../../../jobfile/items-from';
import { canonicalJson, shortHash } from '../../../jobfile/keys';
import { renderTemplate } from '../../../jobfile/placeholders';
import { nearest } from '../../../jobfile/text';
import { normaliseBaseUrl, outputNameProblem, parseDuration } from '../../../jobfile/values';

describe('csv (RFC 4180)', () => {
  it('quotes, doubled quotes, commas and line breaks inside quotes, CRLF, a trailing empty field', () => {
    const { records, problems } = parseCsvCells('a,b,c\r\n"x, y","say ""hi""","l1\r\nl2"\r\n1,,\n');
    assert.deepEqual(problems, []);
    assert.deepEqual(
      records.map((r) => r.map((c) => c.value)),
      [
        ['a', 'b', 'c'],
        ['x, y', 'say "hi"', 'l1\r\nl2'],
        ['1', '', ''],
      ],
    );
  });
  it('positions of cells', () => {
    const { rows } = csvRows('prompt,seconds\n"two\nlines",5\n');
    assert.deepEqual(rows[0]?.at, { prompt: { line: 2, column: 1 }, seconds: { line: 3, column: 8 } });
  });
  it('a BOM and no final newline', () => {
    const { rows } = csvRows('\ufeffprompt\nhello');
    assert.deepEqual(
      rows.map((r) => r.values),
      [{ prompt: 'hello' }],
    );
  });
  it('stray quote and duplicate header', () => {
    assert.deepEqual(
      csvRows('prompt,prompt\na"b,c\n').problems.map((p) => [p.line, p.column, p.message]),
      [
        [2, 2, 'a quote inside an unquoted field: quote the whole field and double the quote ("")'],
        [1, 8, 'header names column "prompt" twice'],
      ],
    );
  });
});

describe('values', () => {
  it('durations', () => {
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(parseDuration('10s'), 10_000);
    assert.equal(parseDuration('5m'), 300_000);
    assert.equal(parseDuration('2h'), 7_200_000);
    assert.equal(parseDuration('1h30m'), 5_400_000);
    for (const bad of ['', '10', '0s', '1d', '5 s', '-1s', '1.5s']) assert.equal(parseDuration(bad), undefined, bad);
  });
  it('base addresses: one rule for job file, client and doctor; trailing slash and /v1 removed, paths kept', () => {
    const cases: [string, string, string[]][] = [
      ['https://gw.example.com', 'https://gw.example.com', []],
      ['https://gw.example.com/', 'https://gw.example.com', ['the trailing slash']],
      ['https://gw.example.com/v1', 'https://gw.example.com', ['the trailing /v1']],
      ['https://gw.example.com/v1/', 'https://gw.example.com', ['the trailing slash', 'the trailing /v1']],
      ['https://gw.example.com/V1', 'https://gw.example.com', ['the trailing /v1']],
      ['  http://127.0.0.1:8787/v1  ', 'http://127.0.0.1:8787', ['the trailing /v1']],
      ['http://127.0.0.1:8787', 'http://127.0.0.1:8787', []],
      ['https://x.example/proxy/v1/', 'https://x.example/proxy', ['the trailing slash', 'the trailing /v1']],
      ['https://gw.example.com/v1beta', 'https://gw.example.com/v1beta', []],
      ['HTTPS://GW.Example.com:443/', 'https://gw.example.com', ['the trailing slash']],
    ];
    for (const [input, normalised, removed] of cases) {
      assert.deepEqual(normaliseBaseUrl(input), { ok: true, normalised, removed }, input);
    }
  });
  it('base addresses: refused with a reason', () => {
    const problem = (value: string): string => {
      const check = normaliseBaseUrl(value);
      return check.ok ? '' : check.problem;
    };
    assert.match(problem('ws://x.example'), /not http or https/);
    assert.match(problem('ftp://x'), /not http or https/);
    assert.match(problem('not a url'), /not a URL/);
    assert.match(problem('https://x.example/?k=1'), /query/);
    assert.match(problem('https://x.example/#top'), /fragment/);
    assert.match(problem('https://x.example/?'), /query/);
    assert.match(problem('https://user:pw@x.example'), /credentials/);
  });
  it('output names', () => {
    assert.equal(outputNameProblem('001-hero'), undefined);
    assert.equal(outputNameProblem('2025-01-01/001'), undefined);
    for (const bad of ['', '../x', 'a/../../x', '/abs', 'C:\\x', 'a\u0000b', 'a\nb', 'a//b', 'a\\b'])
      assert.notEqual(outputNameProblem(bad), undefined, bad);
  });
});

describe('placeholders and keys', () => {
  it('renders, pads and escapes', () => {
    const values = new Map([
      ['index', '7'],
      ['job', 'j'],
    ]);
    assert.deepEqual(renderTemplate('{index:03}-{job}-{{x}}', values, 'name'), { ok: true, value: '007-j-{x}' });
    assert.deepEqual(renderTemplate('{ndex}', values, 'name'), {
      ok: false,
      problem: 'unknown placeholder {ndex} in name; did you mean {index}?',
    });
  });
  it('canonical JSON ignores key order and undefined', () => {
    assert.equal(canonicalJson({ b: 1, a: [1, { d: undefined, c: 'x' }] }), '{"a":[1,{"c":"x"}],"b":1}');
    assert.equal(shortHash({ a: 1, b: 2 }), shortHash({ b: 2, a: 1 }));
    assert.match(shortHash({}), /^[0-9a-f]{12}$/);
  });
  it('suggestions only for plausible typos', () => {
    assert.equal(nearest('promt', ['prompt', 'model']), 'prompt');
    assert.equal(nearest('colour', ['model', 'seconds']), undefined);
  });
});
