// Who listens on a loopback port decides whether GATEWAY_API_KEY goes there unasked (docs/keys.md),
// checked when the rule is applied and again on every connection, before a byte is sent. Real
// parts: the kernel's socket tables, a listener of another user (uid 65534, nobody), real HTTP.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { GatewayKeyWithheldError, keyRouteRefusals, readCatalogs } from '../../../gateway/index';
import { HttpTransport } from '../../../gateway/http';
import { loopbackListener } from '../../../gateway/key-route';
import { listenerOwners, parseSocketTable, tableEndpoints } from '../../../gateway/listener-owner';
import { NOBODY, startForeignListener, type ForeignListener } from '../../support/foreign-listener';

const KEY = 'sk-key-route-0123456789abcdef';
const FILE = '/root/.config/reelflow/keys.yaml';

async function ownServer(port = 0): Promise<{ server: Server; port: number; keyed: number }> {
  const state = { keyed: 0 };
  const server = createServer((req, res) => {
    if (req.headers.authorization) state.keyed += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"id":"m1"}]}');
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    get keyed() {
      return state.keyed;
    },
  };
}

const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

describe('socket tables', () => {
  it('writes addresses as the kernel does, and reads its rows', () => {
    assert.deepEqual(tableEndpoints('127.0.0.1', 8080, true), ['0100007F:1F90', '0000000000000000FFFF00000100007F:1F90']);
    assert.deepEqual(tableEndpoints('::1', 443, true), ['00000000000000000000000001000000:01BB']);
    assert.deepEqual(tableEndpoints('::', 80, true), ['00000000000000000000000000000000:0050']);
    const text =
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n' +
      '   0: 0100007F:99C1 00000000:0000 0A 00000000:00000000 00:00000000 00000000 65534        0 18058 1 0 100 0 0 10 0\n' +
      'garbage\n';
    assert.deepEqual(parseSocketTable(text), [{ local: '0100007F:99C1', remote: '00000000:0000', state: '0A', uid: 65534 }]);
  });
});

describe('key route: whose program listens on a loopback port', () => {
  let foreign: ForeignListener;
  let own: Awaited<ReturnType<typeof ownServer>>;

  before(async () => {
    own = await ownServer();
    foreign = await startForeignListener(`http://127.0.0.1:${own.port}`);
  });
  after(async () => {
    await foreign?.close();
    if (own) await closeServer(own.server);
  });

  it('reads the owner of a listening port from /proc/net/tcp', () => {
    assert.deepEqual(listenerOwners(['127.0.0.1'], foreign.port), { uids: [NOBODY] });
    assert.deepEqual(listenerOwners(['127.0.0.1'], own.port), { uids: [process.getuid!()] });
    assert.deepEqual(loopbackListener(`http://127.0.0.1:${own.port}`), { kind: 'own' });
    assert.deepEqual(loopbackListener(`http://localhost:${own.port}`), { kind: 'own' });
    assert.deepEqual(loopbackListener(foreign.url), { kind: 'other', owner: 'uid 65534 (nobody)', you: 'uid 0 (root)' });
  });

  it("refuses another user's port and the catalog read sends it nothing; the user's own port is read", async () => {
    const [refusal] = keyRouteRefusals('GATEWAY_API_KEY', [foreign.url], [], FILE);
    assert.match(refusal?.message ?? '', /belongs to uid 65534 \(nobody\), and you are uid 0 \(root\)/);
    assert.deepEqual(keyRouteRefusals('GATEWAY_API_KEY', [`http://localhost:${own.port}`], [], FILE), []);
    const report = await readCatalogs([`http://localhost:${own.port}`], { key: KEY });
    assert.equal(report.readings[0]?.kind, 'catalog', JSON.stringify(report));
    assert.ok(own.keyed > 0);
  });

  it("remembers the user's listener between applications of the rule, and checks every connection made", async () => {
    // The worker applies the rule before every gateway call; the listener is looked up once, and the
    // connection (not the earlier look-up) is what proves whose program gets the key.
    const mine = await ownServer();
    const origin = `http://127.0.0.1:${mine.port}`;
    assert.deepEqual(keyRouteRefusals('GATEWAY_API_KEY', [origin], [], FILE), []);
    await closeServer(mine.server);
    const squatter = await startForeignListener(`http://127.0.0.1:${own.port}`, mine.port);
    const transport = new HttpTransport();
    try {
      assert.deepEqual(keyRouteRefusals('GATEWAY_API_KEY', [origin], [], FILE), [], 'the listener found before is remembered');
      await assert.rejects(
        transport.send({ url: new URL(`${origin}/v1/models`), method: 'GET', headers: { authorization: `Bearer ${KEY}` } }, origin),
        GatewayKeyWithheldError,
      );
      await squatter.flush();
      assert.deepEqual(squatter.keyed(), []);
      assert.equal(keyRouteRefusals('GATEWAY_API_KEY', [origin], [], FILE).length, 1, 'a refused connection forgets it');
    } finally {
      await transport.destroy();
      await squatter.close();
    }
  });

  it('checks every connection: a port taken over by another user after the check gets no key', async () => {
    // The user's gateway passes the check, then stops; another user takes its port before the request.
    const mine = await ownServer();
    const origin = `http://127.0.0.1:${mine.port}`;
    try {
      assert.deepEqual(keyRouteRefusals('GATEWAY_API_KEY', [origin], [], FILE), []);
    } finally {
      await closeServer(mine.server);
    }
    const squatter = await startForeignListener(`http://127.0.0.1:${own.port}`, mine.port);
    const transport = new HttpTransport();
    try {
      await assert.rejects(
        transport.send({ url: new URL(`${origin}/v1/models`), method: 'GET', headers: { authorization: `Bearer ${KEY}` } }, origin),
        (error: Error) => {
          assert.ok(error instanceof GatewayKeyWithheldError, String(error));
          assert.match(error.message, new RegExp(`GATEWAY_API_KEY was not sent to ${origin}: .*uid 65534 \\(nobody\\)`));
          assert.ok(error.message.includes(`--allow-key GATEWAY_API_KEY@${origin}`));
          return true;
        },
      );
      const report = await readCatalogs([origin], { key: KEY });
      assert.notEqual(report.readings[0]?.kind, 'catalog');
      await squatter.flush();
      assert.deepEqual(squatter.keyed(), []);
      // The refused connection forgot the user's listener found there: the rule looks again, and refuses by name.
      const [again] = keyRouteRefusals('GATEWAY_API_KEY', [origin], [], FILE);
      assert.match(again?.message ?? '', /belongs to uid 65534 \(nobody\), and you are uid 0 \(root\)/);
      // The user's own pair lifts the check: they chose that port.
      assert.deepEqual(keyRouteRefusals('GATEWAY_API_KEY', [origin], [{ variable: 'GATEWAY_API_KEY', origin }], FILE), []);
      const answer = await transport.send(
        { url: new URL(`${origin}/v1/models`), method: 'GET', headers: { authorization: `Bearer ${KEY}` } },
        origin,
      );
      await answer.body.text();
      assert.equal(answer.status, 200);
      await squatter.flush();
      assert.equal(squatter.keyed().length, 1);
    } finally {
      await transport.destroy();
      await squatter.close();
    }
  });
});
