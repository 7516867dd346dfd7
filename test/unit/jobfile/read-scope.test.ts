// What a job file may have a worker read: its own folder, and folders its user allows (never the
// job file itself); never /proc, /sys or /dev.
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { loadJobFile, type LoadResult } from '../../../jobfile';
import { parseReadSettings, ReadSettingsError } from '../../../jobfile/read-settings';
import { RUN_DATE, tempJobDir } from './helpers';

const HEAD = 'name: t\ngateway:\n  base_urls: [http://127.0.0.1:8787]\ndefaults:\n  model: m\n';

function job(body: string, files: Record<string, string> = {}) {
  return tempJobDir({ 'job.yaml': `${HEAD}${body}`, 'assets/logo.png': 'png', ...files });
}

function loaded(dir: string, allowRead?: string[]): Promise<LoadResult> {
  return loadJobFile(join(dir, 'job.yaml'), { runDate: RUN_DATE, ...(allowRead ? { allowRead } : {}) });
}

async function messages(dir: string, allowRead?: string[]): Promise<string[]> {
  const r = await loaded(dir, allowRead);
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
  it('refuses /proc/self/environ as a reference or items_from, even with / allowed', async () => {
    for (const allowRead of [undefined, ['/']]) {
      const ref = await messages(job('items:\n  - prompt: hi\n    references:\n      - image: /proc/self/environ\n'), allowRead);
      assert.equal(ref.length, 1, ref.join('\n'));
      assert.match(ref[0]!, /^items\[0\]\.references\[0\]\.image: \/proc\/self\/environ is under \/proc .*system files are never read/);
      const rows = await messages(job('items_from:\n  file: /proc/self/environ\n  format: txt\n'), allowRead);
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

  it("confines references and items_from to the job file's folder, saying how the user allows another", async () => {
    const secret = outsideFile();
    const refused = await messages(job(`items:\n  - prompt: hi\n    references:\n      - image: ${secret}\n`));
    assert.equal(refused.length, 1, refused.join('\n'));
    assert.match(refused[0]!, /is outside the job file's folder .*run with --allow-read .*reads\.yaml\); a job file cannot allow it/);
    assert.ok(refused[0]!.includes(`--allow-read ${dirname(secret)}`), refused[0]);
    const rows = await messages(job(`items_from:\n  file: ${secret}\n  format: txt\n`));
    assert.match(rows[0] ?? '', /^items_from\.file: .* is outside the job file's folder/);
  });

  it('a job file that sets references.allow_outside is refused at that line, whatever its value', async () => {
    const secret = outsideFile();
    for (const value of ['true', 'false']) {
      const r = await loaded(
        job(`references:\n  allow_outside: ${value}\nitems:\n  - prompt: hi\n    references:\n      - image: ${secret}\n`),
      );
      assert.equal(r.ok, false);
      if (r.ok) return;
      const own = r.errors.find((e) => e.message.includes('cannot widen'));
      assert.ok(own, r.errors.map((e) => e.message).join('\n'));
      assert.equal(own.line, 7);
      assert.match(own.message, /^references\.allow_outside: a job file cannot widen what it may read .*--allow-read DIR/);
      // The reference itself is still outside, and reported as such: the key allowed nothing.
      assert.ok(r.errors.some((e) => /is outside the job file's folder/.test(e.message)));
      assert.ok(!r.errors.some((e) => /unknown|unrecognized/i.test(e.message)), 'not reported twice');
    }
  });

  it("the user's allowed folders let it read there, and every file read outside the folder is listed", async () => {
    const secret = outsideFile();
    const dir = job(
      `items_from:\n  file: ${join(dirname(secret), 'rows.txt')}\nitems:\n  - prompt: hi\n    references:\n      - image: ${secret}\n  - prompt: again\n    references:\n      - image: ${secret}\n`,
    );
    writeFileSync(join(dirname(secret), 'rows.txt'), 'one\n');
    const r = await loaded(dir, [dirname(secret)]);
    assert.ok(r.ok, r.ok ? '' : r.errors.map((e) => e.message).join('\n'));
    const listed = r.plan.warnings.filter((w) => w.includes("outside the job file's folder"));
    assert.deepEqual(
      listed.map((w) => w.replace(/^.*job\.yaml:(\d+):\d+: warning: /, '$1: ')),
      [
        `7: items_from.file: reads ${join(dirname(secret), 'rows.txt')}, outside the job file's folder (allowed by you: ${dirname(secret)})`,
        `11: items[0].references[0].image: reads ${secret}, outside the job file's folder (allowed by you: ${dirname(secret)})`,
      ],
      'each file once, where it is first named',
    );
    // Another folder allowed does not reach this one.
    const elsewhere = await messages(dir, [tempJobDir()]);
    assert.equal(elsewhere.length, 3, elsewhere.join('\n'));
    assert.ok(elsewhere.every((m) => m.includes("is outside the job file's folder")));
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

describe("the user's read settings (reads.yaml)", () => {
  it('reads allow_read as absolute folders, ~ for the home folder', () => {
    const folders = parseReadSettings('allow_read:\n  - /srv/brand\n  - ~/shared\n', '/x/reads.yaml');
    assert.equal(folders[0], '/srv/brand');
    assert.match(folders[1]!, /\/shared$/);
    assert.deepEqual(parseReadSettings('', '/x/reads.yaml'), []);
  });

  it('a wrong file is an error naming file:line:column', () => {
    assert.throws(
      () => parseReadSettings('allow_read:\n  - shared\n', '/x/reads.yaml'),
      (e: unknown) => {
        assert.ok(e instanceof ReadSettingsError);
        assert.match(e.message, /^\/x\/reads\.yaml:1:1: "shared" is not an absolute folder/);
        return true;
      },
    );
    assert.throws(
      () => parseReadSettings('allow_outside: true\n', '/x/reads.yaml'),
      /\/x\/reads\.yaml:1:1: unknown setting "allow_outside"/,
    );
  });
});
