// Where a job file names each model (jobfile/model-sites.ts): the lines the run's preflight points
// at when the gateway's catalog lacks a model (docs/preflight.md).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plan } from './helpers';

const HEAD = `name: sites
gateway:
  base_urls: [http://127.0.0.1:8787]
`;

describe('model sites', () => {
  it('defaults.model, an item, a models entry, a matrix value, the first items_from row and enhance.model, each at its line', async () => {
    const p = await plan(
      `${HEAD}defaults:
  model: seedance-1.0-pro
models:
  sora-3:
    protocol: openai
enhance:
  model: claude-sonet
items:
  - prompt: a
  - prompt: b
    model: sora-3
items_from:
  file: rows.csv
`,
      { 'rows.csv': 'prompt,model\none,kling-v9\ntwo,kling-v9\n' },
    );
    const sites = (p.modelSites ?? []).map((s) => `${s.model} ${s.at.replace(/^.*\//, '')} ${s.where}`);
    assert.deepEqual(sites, [
      'seedance-1.0-pro job.yaml:5:10 defaults.model',
      'sora-3 job.yaml:14:12 items[1].model',
      'sora-3 job.yaml:7:3 models.sora-3',
      'kling-v9 rows.csv:2:5 items_from, column model',
      'claude-sonet job.yaml:10:10 enhance.model',
    ]);
  });

  it('a matrix of models points at each value; a model named by thousands of items keeps three sites', async () => {
    const p = await plan(`${HEAD}matrix:
  model: [veo-3.1-fast-generate-001, sora-x]
items:
${Array.from({ length: 50 }, (_, i) => `  - prompt: p${i}`).join('\n')}
`);
    const sites = (p.modelSites ?? []).map((s) => `${s.model} ${s.at.replace(/^.*\//, '')} ${s.where}`);
    assert.deepEqual(sites, ['veo-3.1-fast-generate-001 job.yaml:5:11 matrix.model[0]', 'sora-x job.yaml:5:38 matrix.model[1]']);
    const many = await plan(`${HEAD}items:
${Array.from({ length: 50 }, (_, i) => `  - {prompt: p${i}, model: veo-3.1-fast-generate-001}`).join('\n')}
`);
    assert.equal(many.modelSites?.length, 3);
  });
});
