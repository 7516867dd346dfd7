// The preflight's judgement (gateway/catalog.ts): pure logic over what the base addresses said.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closestModels, judgeCatalog, listed, modelIds, modelUses, type CatalogReport } from '../../../gateway/catalog';
import { DEFAULT_CATALOG } from '../../../sim';

const CATALOG = new Set(Object.keys(DEFAULT_CATALOG));
const A = 'http://127.0.0.1:4001';
const B = 'http://127.0.0.1:4002';

describe('catalog', () => {
  it('suggests the nearest names, a dated suffix counting as close', () => {
    assert.deepEqual(closestModels('seedance-1.0-pro', CATALOG).slice(0, 2), ['seedance-1-0-pro-250528', 'seedance-1-0-lite-t2v-250428']);
    assert.equal(closestModels('veo3.1-generate', CATALOG)[0], 'veo-3.1-generate-001');
    assert.equal(closestModels('claude-sonet-4-6', CATALOG)[0], 'claude-sonnet-4-6');
    assert.equal(closestModels('x', CATALOG).length, 3);
    assert.deepEqual(closestModels('x', []), []);
  });

  it('reads ids from an OpenAI list; anything else, or an empty list, is no catalog', () => {
    assert.deepEqual([...(modelIds('{"object":"list","data":[{"id":"a"},{"id":"b"},{"x":1},{"id":7}]}') ?? [])], ['a', 'b']);
    assert.equal(modelIds('{"data":[]}'), undefined);
    assert.equal(modelIds('<html>console</html>'), undefined);
    assert.equal(modelIds('{"detail":"Not Found"}'), undefined);
    assert.equal(modelIds(`{"data":[{"id":"${'m'.repeat(300)}"},{"id":"ok"}]}`)?.size, 1, 'absurd ids are dropped');
  });

  it('a wildcard entry (LiteLLM lists `gemini/*` as configured) lists every name it matches, and only those', () => {
    const catalog = new Set(['gemini/*', 'veo-3.1-fast-generate-001', 'a.b*']);
    assert.equal(listed('gemini/veo-3.1-generate-001', catalog), true);
    assert.equal(listed('veo-3.1-fast-generate-001', catalog), true);
    assert.equal(listed('anthropic/claude', catalog), false);
    assert.equal(listed('a.bc', catalog), true);
    assert.equal(listed('axbc', catalog), false, 'the dot is not a regex wildcard');
  });

  it('a hostile catalog name is shown inert: no escape sequence, no key', () => {
    const hostile = 'seedance-1-0-pro\u001b]0;owned\u0007\u001b[2J sk-abcdefghijklmnopqrstuvwxyz012345';
    const models = new Set([hostile]);
    const verdict = judgeCatalog(
      { readings: [{ base: A, kind: 'catalog', models }], catalog: { base: A, models } },
      [{ model: 'seedance-1.0-pro', role: 'video', sites: [] }],
      'K',
    );
    const message = verdict.problems[0]?.message ?? '';
    assert.match(message, /closest in the catalog: seedance-1-0-pro/);
    // eslint-disable-next-line no-control-regex -- asserting that none is left
    assert.doesNotMatch(message, /[\u0000-\u001f\u007f-\u009f]/);
    assert.ok(!message.includes('sk-abcdefghijklmnopqrstuvwxyz012345'), message);
  });

  it('no address answering is exit 3, naming every address and why', () => {
    const report: CatalogReport = {
      readings: [
        { base: A, kind: 'unreachable', why: 'connection refused (ECONNREFUSED)' },
        { base: B, kind: 'unreachable', why: 'no answer within 5 s' },
      ],
    };
    const verdict = judgeCatalog(report, [], 'GATEWAY_API_KEY');
    assert.equal(verdict.exit, 3);
    assert.equal(
      verdict.problems[0]?.message,
      `no gateway address answers: ${A}: connection refused (ECONNREFUSED); ${B}: no answer within 5 s. ` +
        'Start the gateway or fix gateway.base_urls; nothing was started',
    );
  });

  it('one address answering without a catalog: go on, names not checked', () => {
    const report: CatalogReport = {
      readings: [
        { base: A, kind: 'unreachable', why: 'connection refused (ECONNREFUSED)' },
        { base: B, kind: 'no-catalog', said: 'HTTP 404: Not Found' },
      ],
    };
    const verdict = judgeCatalog(report, [{ model: 'anything', role: 'video', sites: [] }], 'K');
    assert.equal(verdict.exit, 0);
    assert.match(verdict.checked, /no catalog published \(GET \/v1\/models: http:\/\/127\.0\.0\.1:4002: HTTP 404: Not Found\)/);
  });

  it('a model the catalog lacks is exit 2 with its sites and the closest names; the key refused everywhere is exit 2', () => {
    const report: CatalogReport = {
      readings: [{ base: A, kind: 'catalog', models: CATALOG }],
      catalog: { base: A, models: CATALOG },
    };
    const plan = {
      items: [
        { request: { model: 'veo-3.1-fast-generate-001' } },
        { request: { model: 'seedance-1.0-pro' } },
        { request: { model: 'veo-3.1-fast-generate-001' } },
      ],
      enhance: { model: 'claude-sonnet-4-6', maxTokens: 100 },
      modelSites: [{ model: 'seedance-1.0-pro', at: 'job.yaml:8:10', where: 'defaults.model' }],
    } as unknown as Parameters<typeof modelUses>[0];
    const uses = modelUses(plan);
    assert.deepEqual(
      uses.map((u) => `${u.role} ${u.model}`),
      ['video veo-3.1-fast-generate-001', 'video seedance-1.0-pro', 'enhance claude-sonnet-4-6'],
    );
    const verdict = judgeCatalog(report, uses, 'K');
    assert.equal(verdict.exit, 2);
    assert.deepEqual(
      verdict.problems.map((p) => p.about),
      ['model seedance-1.0-pro'],
    );
    assert.equal(
      verdict.problems[0]?.message,
      `model "seedance-1.0-pro" is not in the gateway's catalog for this key (GET /v1/models on ${A} lists 9 models); ` +
        'set at job.yaml:8:10 (defaults.model); closest in the catalog: seedance-1-0-pro-250528, seedance-1-0-lite-t2v-250428, ' +
        `${closestModels('seedance-1.0-pro', CATALOG)[2]}. Fix the name in the job file, or have the gateway give the key's token group this model`,
    );
    const refused = judgeCatalog({ readings: [{ base: A, kind: 'key-refused', said: 'HTTP 401: 无效的令牌' }] }, uses, 'GATEWAY_API_KEY');
    assert.equal(refused.exit, 2);
    assert.match(
      refused.problems[0]?.message ?? '',
      /the gateway refused the key in GATEWAY_API_KEY \(GET \/v1\/models on .*: HTTP 401: 无效的令牌\)/,
    );
  });
});
