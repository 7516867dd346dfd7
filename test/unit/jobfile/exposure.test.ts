// Warnings about where the key goes: a variable that is never sent named as the key, plain http off
// loopback. Which other variables may go where is the user's key rule (test/unit/key-rule.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plan } from './helpers';

const job = (gateway: string) => `name: t\ngateway:\n${gateway}defaults:\n  model: m\nitems:\n  - prompt: hi\n`;

describe('key exposure warnings', () => {
  it('warns when api_key_env names a variable that is never sent (TEMPORAL_*, AWS_*)', async () => {
    for (const variable of ['AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'TEMPORAL_API_KEY', 'temporal_tls_key']) {
      const p = await plan(job(`  base_urls: [https://gw.example.com]\n  api_key_env: ${variable}\n`));
      assert.equal(p.warnings.length, 1, `${variable}: ${p.warnings.join('\n')}`);
      assert.match(p.warnings[0]!, new RegExp(`4:16: warning: gateway\\.api_key_env names ${variable}, which is never sent`));
    }
    // Other variables go only where the user's key settings allow: `run` and validate say so.
    for (const variable of ['GATEWAY_API_KEY', 'OPENAI_API_KEY', 'NEWAPI_TOKEN', 'LITELLM_KEY']) {
      const p = await plan(job(`  base_urls: [https://gw.example.com]\n  api_key_env: ${variable}\n`));
      assert.deepEqual(p.warnings, [], variable);
    }
  });

  it('warns when a gateway address off loopback uses plain http', async () => {
    const p = await plan(job('  base_urls: [http://gw.example.com, https://gw2.example.com, http://10.0.0.5:3000]\n'));
    assert.equal(p.warnings.length, 2, p.warnings.join('\n'));
    assert.match(
      p.warnings[0]!,
      /warning: gateway\.base_urls\[0\]: http:\/\/gw\.example\.com is plain http on a host that is not loopback/,
    );
    assert.match(p.warnings[1]!, /gateway\.base_urls\[2\]: http:\/\/10\.0\.0\.5:3000 is plain http/);
    const local = await plan(job('  base_urls: [http://127.0.0.1:8787, http://localhost:3000, "http://[::1]:4000"]\n'));
    assert.deepEqual(local.warnings, []);
  });
});
