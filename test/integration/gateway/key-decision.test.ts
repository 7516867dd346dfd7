// Every request to a gateway takes its key header from one decision (gateway/exchange.ts): the
// catalog, the published prices and the doctor's probes included. Given the key rule's verdict
// (gateway/key-route.ts), an origin the key may not go to gets the request without it. Real parts:
// a loopback listener of another user (uid 65534, nobody) in front of a listener of ours, real HTTP.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { checkBases } from '../../../client/doctor/gateway';
import { Prober } from '../../../client/doctor/http';
import { grantedOrigins, keyRouteRefusals, readCatalogs, readPublishedPrices } from '../../../gateway/index';
import { startForeignListener, type ForeignListener } from '../../support/foreign-listener';

const KEY = 'sk-key-decision-0123456789abcdef';
const FILE = '/root/.config/reelflow/keys.yaml';

/** Our own gateway stand-in: a catalog for GET /v1/models, a task-not-found for anything else; counts keyed requests. */
async function ownGateway(): Promise<{ server: Server; url: string; keyed: () => number }> {
  let keyed = 0;
  const server = createServer((req, res) => {
    if (req.headers.authorization || req.headers['x-api-key']) keyed += 1;
    req.resume();
    if (req.url === '/v1/models') res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"id":"m1"}]}');
    else res.writeHead(400, { 'content-type': 'application/json' }).end('{"code":"task_not_exist","message":"task_not_exist"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, keyed: () => keyed };
}

describe('one key decision for every gateway request', () => {
  let own: Awaited<ReturnType<typeof ownGateway>>;
  let foreign: ForeignListener;
  let bases: string[];
  let keyOrigins: Set<string>;

  before(async () => {
    own = await ownGateway();
    foreign = await startForeignListener(own.url);
    bases = [own.url, foreign.url];
    // The key rule: our own loopback listener is allowed, another user's is not.
    const refusals = keyRouteRefusals('GATEWAY_API_KEY', bases, [], FILE);
    assert.deepEqual(
      refusals.map((r) => r.origin),
      [foreign.url],
    );
    keyOrigins = grantedOrigins(bases, refusals);
  });
  after(async () => {
    await foreign?.close();
    own?.server.closeAllConnections();
    await new Promise<void>((resolve) => (own ? own.server.close(() => resolve()) : resolve()));
  });

  it('the catalog read sends the key to the allowed origin only', async () => {
    const before = own.keyed();
    const report = await readCatalogs(bases, { key: KEY, keyOrigins, tries: 1 });
    assert.equal(report.readings[0]?.kind, 'catalog', JSON.stringify(report));
    assert.equal(report.readings[1]?.kind, 'no-catalog', JSON.stringify(report));
    await foreign.flush();
    assert.ok(
      foreign.seen.some((r) => r.path === '/v1/models'),
      'the other origin was still read, without the key',
    );
    assert.deepEqual(foreign.keyed(), []);
    assert.equal(own.keyed() - before, 1);
  });

  it('the published prices send the key to the allowed origin only', async () => {
    await readPublishedPrices([foreign.url], new Set(['m1']), { key: KEY, keyOrigins });
    await foreign.flush();
    assert.deepEqual(foreign.keyed(), []);
  });

  it("the doctor's route probes send the key to the allowed origin only", async () => {
    const before = own.keyed();
    const prober = new Prober(bases, { key: KEY, keyOrigins });
    try {
      const needs = { video: new Map([['general' as const, { items: 1, models: ['m1'] }]]), messages: true };
      const probes = await checkBases(prober, bases, { env: 'GATEWAY_API_KEY', key: KEY }, new Map(), needs);
      assert.equal(probes.length, 2);
      assert.match(probes[1]!.check.detail, /key not sent \(the key rule does not allow GATEWAY_API_KEY here\)/);
    } finally {
      await prober.close();
    }
    await foreign.flush();
    assert.ok(foreign.seen.length >= 3, JSON.stringify(foreign.seen));
    assert.deepEqual(foreign.keyed(), []);
    // Our own origin got each probe (general, openai, messages) with the key.
    assert.equal(own.keyed() - before, 3);
  });
});
