// The key rule (docs/keys.md): which variable may be sent to which origin; the settings file.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLoopbackHost, keyRefusals, parseAllowKey, type KeyAllowance, type LoopbackListener } from '../../../jobfile/key-rule';
import { KeySettingsError, keySettingsPath, parseKeySettings } from '../../../jobfile/key-settings';

const FILE = '/home/u/.config/reelflow/keys.yaml';
const OWN = (): LoopbackListener => ({ kind: 'own' });
const refused = (variable: string, urls: string[], allowances: KeyAllowance[] = [], listener: (origin: string) => LoopbackListener = OWN) =>
  keyRefusals(variable, urls, allowances, FILE, listener).map((r) => `${r.never ? 'never' : 'refused'} ${r.origin}`);

describe('key rule', () => {
  it('sends GATEWAY_API_KEY to loopback gateways unasked, and nowhere else', () => {
    assert.deepEqual(refused('GATEWAY_API_KEY', ['http://127.0.0.1:8787', 'http://localhost:4000/v1', 'http://[::1]:9']), []);
    assert.deepEqual(refused('GATEWAY_API_KEY', ['https://gw.example.com/v1', 'http://10.0.0.5:3000']), [
      'refused https://gw.example.com',
      'refused http://10.0.0.5:3000',
    ]);
  });

  it('counts only literal loopback addresses and the name localhost as loopback, not *.localhost', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '[::1]', '::1', 'localhost', 'LOCALHOST']) assert.ok(isLoopbackHost(host), host);
    for (const host of ['gw.localhost', 'localhost.', 'localhost.example.com', '0.0.0.0', '[::ffff:7f00:1]', '10.0.0.1']) {
      assert.ok(!isLoopbackHost(host), host);
    }
    assert.deepEqual(refused('GATEWAY_API_KEY', ['http://gw.localhost:4000']), ['refused http://gw.localhost:4000']);
  });

  it("sends GATEWAY_API_KEY to a loopback port unasked only when the user's own program listens there", () => {
    const asked: string[] = [];
    const other = (origin: string): LoopbackListener => {
      asked.push(origin);
      return { kind: 'other', owner: 'uid 65534 (nobody)', you: 'uid 1000 (alice)' };
    };
    const [refusal] = keyRefusals('GATEWAY_API_KEY', ['http://127.0.0.1:4000/v1'], [], FILE, other);
    assert.equal(refusal?.origin, 'http://127.0.0.1:4000');
    assert.match(refusal!.message, /belongs to uid 65534 \(nobody\), and you are uid 1000 \(alice\)/);
    assert.match(refusal!.message, /--allow-key GATEWAY_API_KEY@http:\/\/127\.0\.0\.1:4000/);
    assert.ok(refusal!.message.includes(FILE));
    // A pair the user wrote is their choice: the listener is not asked.
    asked.length = 0;
    assert.deepEqual(
      refused('GATEWAY_API_KEY', ['http://127.0.0.1:4000'], [{ variable: 'GATEWAY_API_KEY', origin: 'http://127.0.0.1:4000' }], other),
      [],
    );
    assert.deepEqual(asked, []);
    // Nor for an origin the default rule does not cover.
    assert.deepEqual(refused('GATEWAY_API_KEY', ['https://gw.example.com'], [], other), ['refused https://gw.example.com']);
    assert.deepEqual(asked, []);
    const unverifiable = (): LoopbackListener => ({ kind: 'unverifiable', why: 'this system has no /proc/net/tcp' });
    const [cannot] = keyRefusals('GATEWAY_API_KEY', ['http://localhost:4000'], [], FILE, unverifiable);
    assert.match(cannot!.message, /cannot tell who listens on http:\/\/localhost:4000: this system has no \/proc\/net\/tcp/);
  });

  it('sends another variable only where an allowance pairs it with the origin', () => {
    assert.deepEqual(refused('OPENAI_API_KEY', ['http://127.0.0.1:8787']), ['refused http://127.0.0.1:8787']);
    const allow = [{ variable: 'LAB_KEY', origin: 'https://gw.example.com' }];
    assert.deepEqual(refused('LAB_KEY', ['https://GW.example.com:443/v1'], allow), []);
    assert.deepEqual(refused('LAB_KEY', ['https://gw.example.com:8443'], allow), ['refused https://gw.example.com:8443']);
    assert.deepEqual(refused('OTHER_KEY', ['https://gw.example.com'], allow), ['refused https://gw.example.com']);
    const [refusal] = keyRefusals('LAB_KEY', ['http://gw.lan:4000'], [], FILE, OWN);
    assert.match(refusal!.message, /--allow-key LAB_KEY@http:\/\/gw\.lan:4000/);
    assert.ok(refusal!.message.includes(FILE));
  });

  it('never sends TEMPORAL_* or AWS_*, whatever is allowed', () => {
    for (const variable of ['TEMPORAL_API_KEY', 'TEMPORAL_TLS_KEY', 'AWS_SECRET_ACCESS_KEY', 'aws_session_token']) {
      const allow = [{ variable, origin: 'http://127.0.0.1:8787' }];
      assert.deepEqual(refused(variable, ['http://127.0.0.1:8787'], allow), ['never http://127.0.0.1:8787'], variable);
    }
  });

  it('parses --allow-key VARIABLE@ORIGIN', () => {
    assert.deepEqual(parseAllowKey('LAB_KEY@https://gw.example.com/v1/'), { variable: 'LAB_KEY', origin: 'https://gw.example.com' });
    for (const bad of ['LAB_KEY', '@https://x', 'LAB KEY@https://x', 'LAB_KEY@ftp://x', 'LAB_KEY@not a url']) {
      assert.equal(typeof parseAllowKey(bad), 'string', bad);
    }
  });
});

describe('key settings file', () => {
  it('is $REELFLOW_CONFIG, else under $XDG_CONFIG_HOME, else ~/.config', () => {
    assert.equal(keySettingsPath({ REELFLOW_CONFIG: '/etc/rf/keys.yaml', XDG_CONFIG_HOME: '/x' }), '/etc/rf/keys.yaml');
    assert.equal(keySettingsPath({ XDG_CONFIG_HOME: '/x' }), '/x/reelflow/keys.yaml');
    assert.match(keySettingsPath({}), /\/\.config\/reelflow\/keys\.yaml$/);
  });

  it('pairs variables with origins', () => {
    const text = '# mine\nGATEWAY_API_KEY:\n  - https://gw.example.com/v1\nLAB_KEY: http://10.0.0.5:4000\n';
    assert.deepEqual(parseKeySettings(text, FILE), [
      { variable: 'GATEWAY_API_KEY', origin: 'https://gw.example.com' },
      { variable: 'LAB_KEY', origin: 'http://10.0.0.5:4000' },
    ]);
    assert.deepEqual(parseKeySettings('# nothing yet\n', FILE), []);
  });

  it('refuses a wrong file with file:line:column', () => {
    const cases: Array<[string, RegExp]> = [
      ['GATEWAY_API_KEY:\n  - https://a\nAWS_SECRET_ACCESS_KEY:\n  - https://b\n', /keys\.yaml:3:1: AWS_SECRET_ACCESS_KEY is never sent/],
      ['GATEWAY_API_KEY:\n  - ftp://a\n', /keys\.yaml:1:1: GATEWAY_API_KEY: "ftp:\/\/a" is not an http\(s\) address/],
      ['- https://a\n', /keys\.yaml:1:1: expected a mapping/],
      ['GATEWAY_API_KEY: [https://a\n', /keys\.yaml:\d+:\d+: /],
    ];
    for (const [text, message] of cases)
      assert.throws(
        () => parseKeySettings(text, FILE),
        (e: Error) => e instanceof KeySettingsError && message.test(e.message),
      );
  });
});
