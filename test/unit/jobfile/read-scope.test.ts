// What a job file may have a worker read: its own folder by default, never /proc, /sys or /dev.
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadJobFile } from '../../../jobfile';
import { RUN_DATE, tempJobDir } from './helpers';

const HEAD = 'name: t\ngateway:\n  base_urls: [http://127.0.0.1:8787]\ndefaults:\n  model: m\n';

function job(body: string, files: Record<string, string> = {}) {
  return tempJobDir({ 'job.yaml': `${HEAD}${body}`, 'assets/logo.png': 'png', ...files });
}

async function messages(dir: string): Promise<string[]> {
  const r = await loadJobFile(join(dir, 'job.yaml'), { runDate: RUN_DATE });
  return r.ok ? [] : r.errors.map((e) => e.message);
}

/** A file outside any job folder, made for the test. */
function outsideFile(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'reelflow-outside-')));
  const path = join(dir, 'secret.png');
  writeFileSync(path, 'not for the gateway');
  return path;
}

describe('what a job may read', () => {
  it('refuses /proc/self/environ as a reference or items_from, even with allow_outside', async () => {
    for (const allow of ['', 'references:\n  allow_outside: true\n']) {
      const ref = await messages(job(`${allow}items:\n  - prompt: hi\n    references:\n      - image: /proc/self/environ\n`));
      assert.equal(ref.length, 1, ref.join('\n'));
      assert.match(ref[0]!, /^items\[0\]\.references\[0\]\.image: \/proc\/self\/environ is under \/proc .*system files are never read/);
      const rows = await messages(job(`${allow}items_from:\n  file: /proc/self/environ\n  format: txt\n`));
      assert.deepEqual(rows.length, 1, rows.join('\n'));
      assert.match(rows[0]!, /^items_from\.file: \/proc\/self\/environ is under \/proc/);
    }
  });

  it('refuses devices and /sys', async () => {
    const dev = await messages(job('items:\n  - prompt: hi\n    references:\n      - audio: /dev/zero\n'));
    assert.match(dev[0] ?? '', /\/dev\/zero is under \/dev/);
    const sys = await messages(job('items_from:\n  file: /sys/kernel/uevent_seqnum\n  format: txt\n'));
    assert.match(sys[0] ?? '', /is under \/sys/);
  });

  it("confines references and items_from to the job file's folder unless references.allow_outside is true", async () => {
    const secret = outsideFile();
    const refused = await messages(job(`items:\n  - prompt: hi\n    references:\n      - image: ${secret}\n`));
    assert.equal(refused.length, 1, refused.join('\n'));
    assert.match(refused[0]!, /is outside the job file's folder .*set references\.allow_outside: true/);
    const rows = await messages(job(`items_from:\n  file: ${secret}\n  format: txt\n`));
    assert.match(rows[0] ?? '', /^items_from\.file: .* is outside the job file's folder/);
    const allowed = await messages(
      job(`references:\n  allow_outside: true\nitems:\n  - prompt: hi\n    references:\n      - image: ${secret}\n`),
    );
    assert.deepEqual(allowed, []);
  });

  it('follows links: a link inside the folder to a file outside is outside', async () => {
    const secret = outsideFile();
    const dir = job('items:\n  - prompt: hi\n    references:\n      - image: ./assets/linked.png\n');
    symlinkSync(secret, join(dir, 'assets', 'linked.png'));
    const refused = await messages(dir);
    assert.match(refused[0] ?? '', /\.\/assets\/linked\.png|linked\.png is outside the job file's folder/);
    const inside = job('items:\n  - prompt: hi\n    references:\n      - image: ./assets/alias.png\n');
    symlinkSync(join(inside, 'assets', 'logo.png'), join(inside, 'assets', 'alias.png'));
    assert.deepEqual(await messages(inside), []);
  });

  it('accepts files anywhere below the folder', async () => {
    const dir = job('items_from:\n  file: data/rows.txt\nitems:\n  - prompt: hi\n    references:\n      - image: assets/logo.png\n', {
      'data/rows.txt': 'one\ntwo\n',
    });
    assert.deepEqual(await messages(dir), []);
  });
});
