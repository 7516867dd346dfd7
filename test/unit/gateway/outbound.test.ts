// Which addresses count as private (the targets a gateway may not send a worker to: gateway/outbound.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPrivateAddress, isPrivateHost, privateTargetProblem } from '../../../gateway/outbound';

describe('outbound addresses', () => {
  it('knows loopback, private, link-local, shared, multicast and unspecified addresses, v4 and v6', () => {
    for (const a of [
      '127.0.0.1',
      '127.9.9.9',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
    ]) {
      assert.equal(isPrivateAddress(a), true, a);
    }
    for (const a of ['8.8.8.8', '172.32.0.1', '192.169.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(isPrivateAddress(a), false, a);
    }
  });

  it('a gateway host is private when it is such an address or localhost', () => {
    assert.equal(isPrivateHost('localhost'), true);
    assert.equal(isPrivateHost('[::1]'), true);
    assert.equal(isPrivateHost('10.0.0.5'), true);
    assert.equal(isPrivateHost('gw.example.com'), false);
  });

  it('names the address it refuses, resolving host names first', async () => {
    assert.match(
      (await privateTargetProblem(new URL('http://169.254.169.254/latest/meta-data/')))!,
      /^http:\/\/169\.254\.169\.254 is a private, loopback or link-local address/,
    );
    assert.match(
      (await privateTargetProblem(new URL('http://localhost:9/x.mp4')))!,
      /localhost, which resolves to (127\.0\.0\.1|::1), a private/,
    );
  });
});
