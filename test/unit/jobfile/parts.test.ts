// The small pure parts: CSV, cron, durations, base addresses, placeholders, keys.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cronProblem, describeCron } from '../../../jobfile/cron';
import { csvRows, parseCsvCells } from '../../../jobfile/items-from';
import { canonicalJson, shortHash } from '../../../jobfile/keys';
import { renderTemplate } from '../../../jobfile/placeholders';
import { nearest } from '../../../jobfile/text';
import { normaliseBaseUrl, outputNameProblem, parseDuration } from '../../../jobfile/values';

describe('csv (RFC 4180)', () => {
  it('quotes, doubled quotes, commas and line breaks inside quotes, CRLF, a trailing empty field', () => {
    const { records, problems } = parseCsvCells('a,b,c\r\n"x, y","say ""hi""","l1\r\nl2"\r\n1,,\n');
    assert.deepEqual(problems, []);
    assert.deepEqual(records.map((r) => r.map((c) => c.value)), [['a', 'b', 'c'], ['x, y', 'say "hi"', 'l1\r\nl2'], ['1', '', '']]);
  });
  it('positions of cells', () => {
    const { rows } = csvRows('prompt,seconds\n"two\nlines",5\n');
    assert.deepEqual(rows[0]?.at, { prompt: { line: 2, column: 1 }, seconds: { line: 3, column: 8 } });
  });
  it('a BOM and no final newline', () => {
    const { rows } = csvRows('\ufeffprompt\nhello');
    assert.deepEqual(rows.map((r) => r.values), [{ prompt: 'hello' }]);
  });
  it('stray quote and duplicate header', () => {
    assert.deepEqual(csvRows('prompt,prompt\na"b,c\n').problems.map((p) => [p.line, p.column, p.message]), [
      [2, 2, 'a quote inside an unquoted field: quote the whole field and double the quote ("")'],
      [1, 8, 'header names column "prompt" twice'],
    ]);
  });
});

describe('cron', () => {
  it('validates ranges, names, steps and lists', () => {
    for (const ok of ['0 3 * * *', '*/15 * * * *', '0 9-17 * * MON-FRI', '0 0 1,15 * *', '5 4 * JAN,jul 0', '0 0 * * 7', '@daily']) {
      assert.equal(cronProblem(ok), undefined, ok);
    }
    assert.equal(cronProblem('60 * * * *'), 'minute 60 is out of range 0-59');
    assert.equal(cronProblem('0 0 0 * *'), 'day-of-month 0 is out of range 1-31');
    assert.equal(cronProblem('0 0 * 13 *'), 'month 13 is out of range 1-12');
    assert.equal(cronProblem('0 0 * * 8'), 'day-of-week 8 is out of range 0-7');
    assert.equal(cronProblem('*/0 * * * *'), 'minute step "0" must be a positive number');
    assert.equal(cronProblem('0 5-2 * * *'), 'hour range "5-2" runs backwards');
    assert.match(cronProblem('') ?? '', /needs 5 fields/);
  });
  it('describes schedules in words', () => {
    assert.equal(describeCron('0 3 * * *', 'Europe/Berlin'), 'at 03:00 every day (Europe/Berlin)');
    assert.equal(describeCron('*/15 * * * *', 'UTC'), 'every 15 minutes every day (UTC)');
    assert.equal(describeCron('30 6 * * 1-5', 'UTC'), 'at 06:30 on Monday through Friday (UTC)');
    assert.equal(describeCron('0 0 1 1 *', 'UTC'), 'at 00:00 on day 1 of the month in January (UTC)');
    assert.equal(describeCron('0 * * * *', 'UTC'), 'every hour, on the hour every day (UTC)');
    assert.equal(describeCron('@weekly', 'UTC'), 'at 00:00 on Sunday (UTC)');
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
  it('base addresses: trailing slash and /v1 normalised, paths kept, model names not involved', () => {
    assert.equal(normaliseBaseUrl('https://gw.example.com/').normalised, 'https://gw.example.com');
    assert.equal(normaliseBaseUrl('https://gw.example.com/v1').normalised, 'https://gw.example.com');
    assert.equal(normaliseBaseUrl('https://gw.example.com/v1/').normalised, 'https://gw.example.com');
    assert.equal(normaliseBaseUrl('http://127.0.0.1:8787').normalised, 'http://127.0.0.1:8787');
    assert.equal(normaliseBaseUrl('https://x.example/proxy/v1/').normalised, 'https://x.example/proxy');
    assert.equal(normaliseBaseUrl('ws://x.example').ok, false);
    assert.equal(normaliseBaseUrl('https://x.example/?k=1').ok, false);
  });
  it('output names', () => {
    assert.equal(outputNameProblem('001-hero'), undefined);
    assert.equal(outputNameProblem('2025-01-01/001'), undefined);
    for (const bad of ['', '../x', 'a/../../x', '/abs', 'C:\\x', 'a\u0000b', 'a\nb', 'a//b', 'a\\b']) assert.notEqual(outputNameProblem(bad), undefined, bad);
  });
});

describe('placeholders and keys', () => {
  it('renders, pads and escapes', () => {
    const values = new Map([['index', '7'], ['job', 'j']]);
    assert.deepEqual(renderTemplate('{index:03}-{job}-{{x}}', values, 'name'), { ok: true, value: '007-j-{x}' });
    assert.deepEqual(renderTemplate('{ndex}', values, 'name'), { ok: false, problem: 'unknown placeholder {ndex} in name; did you mean {index}?' });
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
