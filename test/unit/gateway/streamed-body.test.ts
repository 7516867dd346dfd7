// The streamed create bodies: base64 in chunks that join exactly, the general body byte for byte
// what one JSON.stringify of the whole would give, a length known up front, the dry-run view that
// reads no more than the start of a file, and the size limit.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InvalidRequestError } from '../../../gateway/errors';
import { buildGeneralCreateBody, describeGeneralCreateBody, generalCreatePieces, prepareGeneralCreateBody } from '../../../gateway/general';
import { base64Chunks, bodyLength, boundedChunks, localFilePiece, streamPieces } from '../../../gateway/streamed-body';
import type { ReferenceAsset, RenderRequest } from '../../../jobfile/plan';
import { MAX_INLINE_CHARS, MAX_REFERENCE_BYTES, referenceSizeProblem } from '../../../jobfile/reference-limits';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-streamed-body-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of source) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

async function* chunked(bytes: Buffer, sizes: number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (const size of sizes) {
    yield bytes.subarray(at, at + size);
    at += size;
  }
  if (at < bytes.length) yield bytes.subarray(at);
}

/** A small deterministic generator, so a failing case can be replayed. */
function lcg(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function request(references: ReferenceAsset[], over: Partial<RenderRequest> = {}): RenderRequest {
  return { model: 'seedance-1-0-pro-250528', protocol: 'general', prompt: 'a "cat", ünï\n', seconds: '5', references, ...over };
}

function image(source: string, local = true): ReferenceAsset {
  return { kind: 'image', role: 'reference_image', source, local };
}

/** What the body must be: the old, whole-in-memory construction, written out here independently. */
function expectedBody(req: RenderRequest, files: Map<string, Buffer>): string {
  const content = req.references.map((r) => {
    const type = { image: 'image/png', video: 'video/mp4', audio: 'audio/mpeg' }[r.kind];
    const url = r.local ? `data:${type};base64,${files.get(r.source)!.toString('base64')}` : r.source;
    return { type: `${r.kind}_url`, [`${r.kind}_url`]: { url }, role: r.role };
  });
  return JSON.stringify({ model: req.model, prompt: req.prompt, seconds: req.seconds, metadata: { content } });
}

describe('base64 in chunks', () => {
  it('joins to exactly the base64 of the whole, however the bytes are cut', async () => {
    const random = lcg(17);
    for (let round = 0; round < 300; round += 1) {
      const bytes = randomBytes(Math.floor(random() * 40));
      const sizes = Array.from({ length: Math.floor(random() * 8) }, () => Math.floor(random() * 7));
      const text = (await collect(base64Chunks(chunked(bytes, sizes)))).toString('latin1');
      assert.equal(text, bytes.toString('base64'), `bytes ${bytes.toString('hex')} cut at ${sizes.join(',')}`);
    }
  });
});

describe('the general create body, streamed', () => {
  // Around the read size (96 KiB), where a chunk's odd bytes carry over, and the empty file.
  const sizes = [0, 1, 2, 3, 4, 98_303, 98_304, 98_305, 196_610, 300_001];
  const files = new Map<string, Buffer>();
  before(async () => {
    for (const size of sizes) {
      const path = join(dir, `ref-${size}.png`);
      files.set(path, randomBytes(size));
      await writeFile(path, files.get(path)!);
    }
  });

  it('is byte for byte the JSON of the whole request, with the length said up front', async () => {
    for (const size of sizes) {
      const path = join(dir, `ref-${size}.png`);
      const req = request([image(path), image('https://assets.example.com/a.png', false), image(join(dir, 'ref-4.png'))]);
      const prepared = await prepareGeneralCreateBody(req);
      const body = await collect(prepared.body as AsyncIterable<Uint8Array>);
      prepared.dispose?.();
      assert.equal(body.toString('utf8'), expectedBody(req, files), `a ${size}-byte reference`);
      assert.equal(prepared.headers?.['content-length'], String(body.length));
      assert.equal(prepared.headers?.['content-type'], 'application/json');
    }
  });

  it('can be made again for another attempt, the same bytes', async () => {
    const req = request([image(join(dir, 'ref-98305.png'))]);
    const first = await collect((await prepareGeneralCreateBody(req)).body as AsyncIterable<Uint8Array>);
    const second = await collect((await prepareGeneralCreateBody(req)).body as AsyncIterable<Uint8Array>);
    assert.ok(first.equals(second));
  });

  it('a prompt that looks like the stand-in for a file does not move the file', async () => {
    const req = request([image(join(dir, 'ref-3.png'))], { prompt: '"reelflow-local-reference-00-0" "data:image/png;base64,"' });
    assert.equal(await buildGeneralCreateBody(req), expectedBody(req, files));
  });

  it('holds no file bytes before it is read: its pieces are text and file names', async () => {
    const pieces = await generalCreatePieces(request([image(join(dir, 'ref-300001.png'))]));
    const text = pieces.filter(Buffer.isBuffer).reduce((n, p) => n + p.length, 0);
    assert.ok(text < 1_000, `${text} bytes of text`);
    assert.equal(bodyLength(pieces), text + 4 * Math.ceil(300_001 / 3));
    assert.equal((await collect(streamPieces(pieces))).length, bodyLength(pieces));
  });

  it('a file that changed size since the body was prepared ends the stream with an error naming it', async () => {
    const path = join(dir, 'changing.png');
    await writeFile(path, randomBytes(1000));
    const grown = await prepareGeneralCreateBody(request([image(path)]));
    await writeFile(path, randomBytes(1001));
    await assert.rejects(collect(grown.body as AsyncIterable<Uint8Array>), (e: unknown) => {
      assert.ok(e instanceof InvalidRequestError);
      assert.match(e.message, /changing\.png changed while it was being sent \(1000 bytes when the request began, 1001 read so far\)/);
      return true;
    });
    const shrunk = await prepareGeneralCreateBody(request([image(path)]));
    await truncate(path, 10);
    await assert.rejects(collect(shrunk.body as AsyncIterable<Uint8Array>), /1001 bytes when the request began, 10 read\)/);
  });

  it('a missing file or a folder is refused when the body is prepared, naming it', async () => {
    await assert.rejects(
      prepareGeneralCreateBody(request([image(join(dir, 'gone.png'))])),
      /reference file .*gone\.png cannot be read: ENOENT/,
    );
    await mkdir(join(dir, 'folder.png'));
    await assert.rejects(
      localFilePiece({ source: join(dir, 'folder.png') }, 'raw'),
      /folder\.png cannot be read: it is not a regular file/,
    );
  });
});

describe('the dry-run view of a general body', () => {
  it('shows the start of a local file and its size, never the whole', async () => {
    const path = join(dir, 'shown.png');
    const bytes = randomBytes(5000);
    await writeFile(path, bytes);
    const small = join(dir, 'tiny.png');
    await writeFile(small, Buffer.from('abc'));
    const body = (await describeGeneralCreateBody(
      request([
        image(path),
        image(small),
        image(`data:image/png;base64,${'A'.repeat(100)}`, false),
        image('https://x.example/a.png', false),
      ]),
    )) as { metadata: { content: { image_url: { url: string } }[] } };
    const urls = body.metadata.content.map((c) => c.image_url.url);
    assert.equal(urls[0], `data:image/png;base64,${bytes.subarray(0, 36).toString('base64')}… (shown.png: 5,000 bytes)`);
    assert.equal(urls[1], `data:image/png;base64,${Buffer.from('abc').toString('base64')}`);
    assert.equal(urls[2], `data:image/png;base64,${'A'.repeat(48)}… (100 characters in all)`);
    assert.equal(urls[3], 'https://x.example/a.png');
  });

  it('describes a 300 MiB (sparse) reference without reading it', async () => {
    const path = join(dir, 'huge.png');
    await writeFile(path, '');
    await truncate(path, 300 * 2 ** 20);
    const before = process.memoryUsage.rss();
    const body = (await describeGeneralCreateBody(request([image(path)]))) as { metadata: { content: { image_url: { url: string } }[] } };
    assert.match(body.metadata.content[0]!.image_url.url, /… \(huge\.png: 300\.0 MiB \(314,572,800 bytes\)\)$/);
    assert.ok(process.memoryUsage.rss() - before < 32 * 2 ** 20);
  });
});

describe('the size limit of a reference', () => {
  it('is the largest file whose data: URL fits in a JavaScript string', () => {
    assert.equal(MAX_INLINE_CHARS, 536_870_888);
    const longestPrefix = 'data:video/x-matroska;base64,'.length;
    assert.ok(longestPrefix + 4 * Math.ceil(MAX_REFERENCE_BYTES / 3) <= MAX_INLINE_CHARS);
    assert.equal(MAX_REFERENCE_BYTES, 402_653_118);
  });

  it('names the file, its size and the limit', () => {
    assert.equal(referenceSizeProblem('reference file a.png', MAX_REFERENCE_BYTES), undefined);
    assert.equal(
      referenceSizeProblem('reference file a.png', 420 * 2 ** 20),
      'reference file a.png is 420.0 MiB (440,401,920 bytes), over the 384.0 MiB (402,653,118 bytes) a local reference may have ' +
        '(the general protocol sends it inline as a data: URL, one JSON string, and 512 MiB of text is the most a gateway can be ' +
        'expected to hold): use a smaller file, or an http(s) URL the gateway can fetch',
    );
  });

  it('is checked when the body is prepared, before anything is read or sent (a sparse file over it)', async () => {
    const path = join(dir, 'over.png');
    await writeFile(path, '');
    await truncate(path, MAX_REFERENCE_BYTES + 1);
    await assert.rejects(prepareGeneralCreateBody(request([image(path)])), (e: unknown) => {
      assert.ok(e instanceof InvalidRequestError);
      assert.match(e.message, /over\.png is 384\.0 MiB \(402,653,119 bytes\), over the 384\.0 MiB \(402,653,118 bytes\)/);
      return true;
    });
  });

  it('cuts off a stream of unknown length past it', async () => {
    await assert.rejects(
      collect(boundedChunks(chunked(Buffer.alloc(100), [40, 40]), 'reference image https://x.example/a.png', 90)),
      /reference image https:\/\/x\.example\/a\.png sent more than 90 bytes, the most a reference may have/,
    );
    assert.equal((await collect(boundedChunks(chunked(Buffer.alloc(90), [40]), 'r', 90))).length, 90);
  });
});
