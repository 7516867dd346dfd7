// One malformed job file per rule: every error with its exact line, column and message.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatJobFileError, loadJobFile } from '../../../jobfile';
import { BAD_CASES } from './bad-cases';
import { load } from './helpers';

describe('malformed job files', () => {
  it('has at least 40 cases, one rule each', () => {
    assert.ok(BAD_CASES.length >= 40, `only ${BAD_CASES.length} cases`);
    assert.equal(new Set(BAD_CASES.map((c) => c.rule)).size, BAD_CASES.length);
  });

  for (const c of BAD_CASES) {
    it(c.rule, async () => {
      const r = await load(c.yaml, c.files);
      assert.equal(r.ok, false, 'expected the job file to be rejected');
      if (r.ok) return;
      const got = r.errors.map(
        (e) => `${e.file.endsWith('job.yaml') ? '' : `${e.file.split('/').pop() ?? ''}:`}${e.line}:${e.column}: ${e.message}`,
      );
      assert.deepEqual(
        got,
        c.errors.map((e) => e.split('${DIR}').join(r.dir)),
      );
    });
  }

  it('every message about a key names that key path, so it reads right without its position', async () => {
    let named = 0;
    for (const c of BAD_CASES) {
      const r = await load(c.yaml, c.files);
      if (r.ok) continue;
      for (const e of r.errors) {
        if (e.path === undefined) continue;
        assert.ok(e.message.includes(e.path), `${c.rule}: "${e.message}" does not name ${e.path}`);
        named++;
      }
    }
    assert.ok(named >= 50, `only ${named} errors carried a key path`);
  });

  it('formats errors as file:line:column: message, the message naming the key path', async () => {
    const r = await load(
      'name: t\ngateway:\n  base_urls: [http://127.0.0.1:8787]\ndefaults:\n  model: m\nitems:\n  - prompt: hi\n    seconds: five\n',
    );
    assert.equal(r.ok, false);
    if (r.ok) return;
    const line = formatJobFileError(r.errors[0] as (typeof r.errors)[number]);
    assert.match(line, /job\.yaml:8:14: items\[0\]\.seconds must be a string of digits such as "5", got "five"$/);
  });

  it('errors in an items_from file name that file', async () => {
    const r = await load(
      'name: t\ngateway:\n  base_urls: [http://127.0.0.1:8787]\ndefaults:\n  model: m\nitems_from:\n  file: rows/p.csv\n',
      { 'rows/p.csv': 'prompt,seconds\nok,5\nbad,x\n' },
    );
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.errors.length, 1);
    assert.ok(r.errors[0]?.file.endsWith('rows/p.csv'), r.errors[0]?.file);
    assert.deepEqual([r.errors[0]?.line, r.errors[0]?.column], [3, 5]);
  });

  it('never shows a key-looking value in a message', async () => {
    const r = await load(
      'name: t\ngateway:\n  base_urls: [http://127.0.0.1:8787]\n  api_key_env: sk-proj-abcdefghijklmnop1234\ndefaults:\n  model: m\nitems:\n  - prompt: hi\n',
    );
    assert.equal(r.ok, false);
    if (r.ok) return;
    for (const e of r.errors) assert.doesNotMatch(e.message, /abcdefghijklmnop/);
  });

  it('an unreadable job file is one error without a position', async () => {
    const r = await loadJobFile('/nonexistent/dir/job.yaml');
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.deepEqual(r.errors, [
      { file: '/nonexistent/dir/job.yaml', line: 0, column: 0, message: 'cannot read the job file: no such file' },
    ]);
    assert.equal(
      formatJobFileError(r.errors[0] as (typeof r.errors)[number]),
      '/nonexistent/dir/job.yaml: cannot read the job file: no such file',
    );
  });
});
