// `--metrics HOST:PORT`: the forms a worker accepts, and the clear refusal of the others.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsAddressError } from '../../../worker/errors';
import { parseMetricsAddress } from '../../../worker/metrics-address';

describe('parseMetricsAddress', () => {
  it('accepts an IPv4 address, localhost, a bracketed IPv6 address and the wildcards a fleet needs', () => {
    assert.deepEqual(parseMetricsAddress('127.0.0.1:9464'), {
      bindAddress: '127.0.0.1:9464',
      host: '127.0.0.1',
      port: 9464,
      description: 'http://127.0.0.1:9464/metrics',
    });
    assert.equal(parseMetricsAddress('localhost:9464').bindAddress, '127.0.0.1:9464');
    assert.equal(parseMetricsAddress('[::1]:9464').description, 'http://[::1]:9464/metrics');
    assert.equal(parseMetricsAddress(' 10.1.2.3:80 ').bindAddress, '10.1.2.3:80');
    assert.equal(parseMetricsAddress('0.0.0.0:9464').description, '0.0.0.0:9464 on every interface (here: http://127.0.0.1:9464/metrics)');
    assert.equal(parseMetricsAddress('[::]:9464').description, '[::]:9464 on every interface (here: http://[::1]:9464/metrics)');
  });

  const refused: Array<[string, RegExp]> = [
    ['9464', /not HOST:PORT/],
    ['127.0.0.1', /not HOST:PORT/],
    ['127.0.0.1:', /not HOST:PORT/],
    ['127.0.0.1:abc', /not HOST:PORT/],
    ['127.0.0.1:0', /port 0 is not between 1 and 65535/],
    ['127.0.0.1:65536', /port 65536 is not between 1 and 65535/],
    ['metrics.example.com:9464', /"metrics\.example\.com" is not an IP address/],
    ['999.1.1.1:9464', /"999\.1\.1\.1" is not an IP address/],
    ['::1:9464', /IPv6 address goes in brackets/],
    ['[fe80::zz]:9464', /\[fe80::zz\] is not an IPv6 address/],
    ['http://127.0.0.1:9464/metrics', /not HOST:PORT/],
    ['', /not HOST:PORT/],
  ];
  for (const [value, why] of refused) {
    it(`refuses ${JSON.stringify(value)}, saying why and what to write`, () => {
      assert.throws(
        () => parseMetricsAddress(value),
        (error: unknown) => {
          assert.ok(error instanceof MetricsAddressError);
          assert.match(error.message, why);
          assert.match(error.message, /use HOST:PORT, e\.g\. 127\.0\.0\.1:9464/);
          return true;
        },
      );
    });
  }
});
