// Names checked where they will be written (#16 item 6): each case failed only at write time, after a paid render.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorsOf, plan } from './helpers';

const HEAD = 'name: t\ngateway:\n  base_urls: [http://127.0.0.1:8787]\ndefaults:\n  model: m\n';

describe('output names where they are written', () => {
  it("counts a name's length in bytes: 190 CJK characters are 570 bytes", async () => {
    const title = '漢'.repeat(190);
    const errors = await errorsOf(`${HEAD}output:\n  name: "{title}"\nitems_from:\n  file: rows.csv\n`, {
      'rows.csv': `prompt,title\nhi,${title}\n`,
    });
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(errors[0]!, /has a file name of 570 bytes in UTF-8; at most 245 fit/);
    // 81 CJK characters (243 bytes) leave room for ".webm.part".
    const ok = await plan(`${HEAD}output:\n  name: "{title}"\nitems_from:\n  file: rows.csv\n`, {
      'rows.csv': `prompt,title\nhi,${'漢'.repeat(81)}\n`,
    });
    assert.equal(ok.items.length, 1);
  });

  it('refuses an S3 name under the manifest/ prefix before anything is created', async () => {
    const errors = await errorsOf(
      `${HEAD}output:\n  storage: s3\n  s3:\n    bucket: videos\n  name: "manifest/{id}"\nitems:\n  - id: a\n    prompt: hi\n`,
    );
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(
      errors[0]!,
      /output name "manifest\/a" of items\[0\] starts with the folder "manifest\/", which reelflow uses for its own files/,
    );
    assert.deepEqual(await errorsOf(`${HEAD}output:\n  name: "manifest-{id}"\nitems:\n  - id: a\n    prompt: hi\n`), []);
  });

  it('refuses a name that needs a folder where another item writes its file', async () => {
    const errors = await errorsOf(`${HEAD}output:\n  name: "{slot}"\nitems:\n  - prompt: one\n    id: a\nitems_from:\n  file: rows.csv\n`, {
      'rows.csv': 'id,prompt,slot\nb,two,grp\nc,three,grp.mp4/x\n',
    });
    assert.ok(
      errors.some((e) => /needs the folder "grp\.mp4", where \S*rows\.csv line 2 writes its video/.test(e)),
      errors.join('\n'),
    );
    const reverse = await errorsOf(`${HEAD}output:\n  name: "{slot}"\nitems_from:\n  file: rows.csv\n`, {
      'rows.csv': 'id,prompt,slot\nb,two,grp.mov/x\nc,three,grp\n',
    });
    assert.ok(
      reverse.some((e) => /writes "grp\.mov", a folder that \S*rows\.csv line 2 needs for its output/.test(e)),
      reverse.join('\n'),
    );
  });

  it('warns about names that differ only in case', async () => {
    const p = await plan(`${HEAD}output:\n  name: "{id}"\nitems:\n  - id: Hero\n    prompt: one\n  - id: hero\n    prompt: two\n`);
    assert.equal(p.warnings.length, 1, p.warnings.join('\n'));
    assert.match(p.warnings[0]!, /output "hero" differs from "Hero" only in case: on macOS and Windows they are the same file/);
  });
});
