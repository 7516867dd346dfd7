// The last frame a gateway names (`content.last_frame_url`, docs/chains.md) is a provider's address
// and untrusted: fetched without the key (another origin than the base address), bounded, and
// taken only when its bytes are a PNG or a JPEG, whatever content-type it claims.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createGatewayClient, DownloadError } from '../../../gateway/index';
import { scripted } from '../../support/scripted-gateway';
import { KEY } from './helpers';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100, 7)]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(100, 3)]);

async function setUp() {
  const gateway = await scripted((_q, res) => res.writeHead(500).end());
  const provider = await scripted((req, res) => {
    const path = req.url ?? '';
    if (path.startsWith('/frame.png')) return res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    if (path.startsWith('/frame.jpg')) return res.writeHead(200, { 'content-type': 'image/jpeg' }).end(JPEG);
    if (path.startsWith('/html')) return res.writeHead(200, { 'content-type': 'image/png' }).end('<html>not a frame</html>');
    if (path.startsWith('/huge'))
      return res.writeHead(200, { 'content-type': 'image/png', 'content-length': '5108' }).end(Buffer.alloc(5108));
    if (path.startsWith('/chunked')) {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(PNG);
      return res.end(Buffer.alloc(5000));
    }
    return res.writeHead(403).end('expired');
  });
  const client = createGatewayClient({ baseUrls: [gateway.url], apiKey: KEY, cooldownMs: 20, maxRetryAfterMs: 200 });
  after(() => client.close());
  return { gateway, provider, client };
}

describe("the gateway's last frame", () => {
  it('is fetched from the provider address without the key, PNG or JPEG by its bytes', async () => {
    const { provider, client } = await setUp();
    const png = await client.fetchFrameImage(`${provider.url}/frame.png?signature=abc`);
    assert.deepEqual(png, { bytes: PNG, type: 'png' });
    const jpeg = await client.fetchFrameImage(`${provider.url}/frame.jpg`);
    assert.equal(jpeg.type, 'jpeg');
    assert.equal(provider.seen.length, 2);
    for (const seen of provider.seen) assert.equal(seen.headers.authorization, undefined, 'no key to a provider address');
  });

  it('refuses what is not an image, what is too large (declared or streamed), and an expired address, at once', async () => {
    const { provider, client } = await setUp();
    const refused = async (path: string, pattern: RegExp) =>
      assert.rejects(client.fetchFrameImage(`${provider.url}${path}`, { maxBytes: 1000 }), (e: unknown) => {
        assert.ok(e instanceof DownloadError, String(e));
        assert.match(e.message, pattern);
        assert.ok(!e.message.includes('signature'), 'the signed query is not in the message');
        return true;
      });
    await refused('/html', /neither a PNG nor a JPEG/);
    await refused('/huge', /declared as 5108 bytes, more than 1000/);
    await refused('/chunked', /larger than 1000 bytes/);
    await refused('/gone?signature=x', /HTTP 403/);
    await assert.rejects(client.fetchFrameImage('file:///etc/passwd'), /not http\(s\)/);
    assert.equal(provider.seen.filter((s) => s.path.startsWith('/gone')).length, 1, 'an expired address is asked once');
  });
});
