// Warnings about where the key goes: another service's credential named as the key, plain http off loopback.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plan } from './helpers';

const job = (gateway: string) => `name: t\ngateway:\n${gateway}defaults:\n  model: m\nitems:\n  - prompt: hi\n`;

describe('key exposure warnings', () => {
  it("warns when api_key_env looks like another service's credential", async () => {
    for (const variable of ['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'MY_DB_PASSWORD', 'STRIPE_KEY', 'APP_SECRET']) {
      const p = await plan(job(`  base_urls: [https://gw.example.com]\n  api_key_env: ${variable}\n`));
      assert.equal(p.warnings.length, 1, `${variable}: ${p.warnings.join('\n')}`);
      assert.match(
        p.warnings[0]!,
        new RegExp(`warning: gateway\\.api_key_env names ${variable}, which looks like another service's credential`),
      );
    }
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
