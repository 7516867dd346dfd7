// A local reference as a create opens it: once, without following a link at any component below
// the checked folder, holding the plan's sha256, streamed from the same descriptor.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ReferenceChangedError } from '../../../gateway/errors';
import { openCheckedReference, openVerifiedReference } from '../../../gateway/reference-file';
import { fileChunks, localFilePiece } from '../../../gateway/streamed-body';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'reelflow-reference-file-')));
after(() => rmSync(root, { recursive: true, force: true }));

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** A job folder with assets/ref.png, and a secret outside it. */
function folder(name: string) {
  const dir = join(root, name);
  mkdirSync(join(dir, 'assets'), { recursive: true });
  const ref = join(dir, 'assets', 'ref.png');
  writeFileSync(ref, 'the checked reference');
  const secret = join(root, `${name}-secret`);
  writeFileSync(secret, 'PRIVATE KEY');
  return { dir, ref, secret, checked: { path: ref, root: dir, sha256: sha256('the checked reference') } };
}

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const all: Buffer[] = [];
  for await (const chunk of chunks) all.push(chunk);
  return Buffer.concat(all);
}

function refusedFor(path: string, why: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof ReferenceChangedError, String(error));
    assert.equal(error.kind, 'reference_changed');
    assert.ok(error.message.includes(path), error.message);
    assert.match(error.message, why);
    assert.match(error.message, /nothing of it was sent/);
    return true;
  };
}

describe('opening a checked reference', () => {
  it('opens the checked file and sends its bytes', async () => {
    const { checked } = folder('plain');
    const piece = await localFilePiece({ source: checked.path, checked }, 'raw');
    assert.equal((await collect(fileChunks(piece))).toString(), 'the checked reference');
  });

  it('refuses the file replaced by a link to a secret', async () => {
    const { ref, secret, checked } = folder('final-link');
    rmSync(ref);
    symlinkSync(secret, ref);
    await assert.rejects(openCheckedReference(checked), refusedFor(ref, /it is now a symbolic link/));
  });

  it('refuses a folder on the way replaced by a link, even one whose target holds a file of the same name', async () => {
    const { dir, ref, checked } = folder('folder-link');
    const elsewhere = join(root, 'folder-link-elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'ref.png'), 'the checked reference');
    renameSync(join(dir, 'assets'), join(dir, 'assets.old'));
    symlinkSync(elsewhere, join(dir, 'assets'));
    await assert.rejects(openCheckedReference(checked), refusedFor(ref, /assets is now a symbolic link/));
  });

  it('refuses a path outside its folder, a folder, and a FIFO (without hanging on it)', async () => {
    const { dir, secret } = folder('places');
    await assert.rejects(openCheckedReference({ path: secret, root: dir }), refusedFor(secret, /it is not below/));
    await assert.rejects(
      openCheckedReference({ path: join(dir, 'assets'), root: dir }),
      refusedFor(join(dir, 'assets'), /not a regular file/),
    );
    const fifo = join(dir, 'assets', 'pipe.png');
    execFileSync('mkfifo', [fifo]);
    await assert.rejects(openCheckedReference({ path: fifo, root: dir }), refusedFor(fifo, /not a regular file/));
  });

  it('refuses other content than the planned sha256 before anything is read for the body', async () => {
    const { ref, checked } = folder('changed');
    writeFileSync(`${ref}.new`, 'other bytes');
    renameSync(`${ref}.new`, ref);
    await assert.rejects(
      openVerifiedReference(checked),
      refusedFor(ref, /its content changed \(sha256 [0-9a-f]{16}…, the plan had [0-9a-f]{16}…\)/),
    );
  });

  it('a file written in place while it is sent: the body ends before its last bytes, with the mismatch', async () => {
    const { ref, checked } = folder('in-place');
    const piece = await localFilePiece({ source: ref, checked }, 'base64');
    // Same size, other bytes, same inode: what the descriptor reads from now on.
    writeFileSync(ref, 'THE CHECKED REFERENCE');
    const sent: Buffer[] = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of fileChunks(piece)) sent.push(chunk);
      })(),
      refusedFor(ref, /its content changed/),
    );
    assert.equal(Buffer.concat(sent).length, 0, 'the only chunk was held back');
  });
});
