// What a plan page fixes for each local reference's create: its real path, the folder it must stay
// below, and its sha256; a reference out of scope by then gets no digest and its written path.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { checkedReference } from '../../../activities/reference-digests';

const top = realpathSync(mkdtempSync(join(tmpdir(), 'reelflow-checked-')));
after(() => rmSync(top, { recursive: true, force: true }));
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('checkedReference', () => {
  const jobDir = join(top, 'job');
  const shared = join(top, 'shared');
  mkdirSync(join(jobDir, 'assets'), { recursive: true });
  mkdirSync(shared);
  writeFileSync(join(jobDir, 'assets', 'logo.png'), 'logo');
  writeFileSync(join(shared, 'brand.png'), 'brand');
  symlinkSync(join(jobDir, 'assets', 'logo.png'), join(jobDir, 'assets', 'alias.png'));
  symlinkSync(join(shared, 'brand.png'), join(jobDir, 'assets', 'out.png'));

  it('a file in the folder, through a link that stays inside: its real path, the folder, its sha256', async () => {
    assert.deepEqual(await checkedReference(join(jobDir, 'assets', 'alias.png'), { jobDir, allowRead: [] }), {
      path: join(jobDir, 'assets', 'logo.png'),
      root: jobDir,
      sha256: sha256('logo'),
    });
  });

  it('a link out of the folder: no digest, its written path below the folder (its create refuses it)', async () => {
    const source = join(jobDir, 'assets', 'out.png');
    assert.deepEqual(await checkedReference(source, { jobDir, allowRead: [] }), { path: source, root: jobDir });
  });

  it('the same link with its target folder allowed by the user: checked below that folder', async () => {
    assert.deepEqual(await checkedReference(join(jobDir, 'assets', 'out.png'), { jobDir, allowRead: [shared] }), {
      path: join(shared, 'brand.png'),
      root: shared,
      sha256: sha256('brand'),
    });
  });
});
