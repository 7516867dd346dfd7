// The part of an S3 prefix every run of a schedule shares (jobfile/settings.ts): where a schedule's
// stored inputs go (storage/inputs/refs.ts), out of reach of a lifecycle rule on its day folders.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadJobFile } from '../../../jobfile';
import { inputLocationFor } from '../../../storage/inputs/refs';
import { RUN_DATE, tempJobDir } from './helpers';

async function s3Output(prefix: string) {
  const dir = tempJobDir({
    'job.yaml': [
      'name: nightly',
      'gateway:\n  base_urls: [http://127.0.0.1:8787]',
      'defaults:\n  model: m',
      'vars:\n  team: stills',
      `output:\n  storage: s3\n  s3:\n    bucket: renders\n    prefix: ${JSON.stringify(prefix)}`,
      'items:\n  - prompt: a harbour',
      '',
    ].join('\n'),
  });
  const result = await loadJobFile(join(dir, 'job.yaml'), { runDate: RUN_DATE });
  assert.ok(result.ok, JSON.stringify(!result.ok && result.errors));
  return result.plan.output;
}

describe("an S3 prefix's undated part", () => {
  for (const [template, prefix, undated] of [
    ['nightly/{date}/', `nightly/${RUN_DATE}/`, 'nightly/'],
    ['/{team}/{job}/{date}', `stills/nightly/${RUN_DATE}/`, 'stills/nightly/'],
    ['out/{job}-{date}/clips/', `out/nightly-${RUN_DATE}/clips/`, 'out/'],
    ['{date}/{job}/', `${RUN_DATE}/nightly/`, ''],
  ] as const) {
    it(`${template}: ${undated || '(the bucket root)'}`, async () => {
      const output = await s3Output(template);
      assert.equal(output.s3?.prefix, prefix);
      assert.equal(output.s3?.undatedPrefix, undated);
      assert.equal(
        (inputLocationFor(output, undefined, 'schedule') as { s3: { prefix: string } }).s3.prefix,
        `${undated}.reelflow/inputs/`,
      );
      // A single run keeps its inputs beside its own outputs, as before.
      assert.equal((inputLocationFor(output, undefined) as { s3: { prefix: string } }).s3.prefix, `${prefix}.reelflow/inputs/`);
    });
  }

  it('a prefix without {date}: none, and a schedule stores beside its (shared) outputs; the field is left out', async () => {
    const output = await s3Output('{team}/{job}/');
    assert.equal(output.s3?.prefix, 'stills/nightly/');
    assert.ok(!('undatedPrefix' in output.s3!), 'settings recorded in history do not change for prefixes without {date}');
    const location = inputLocationFor(output, undefined, 'schedule') as { s3: { prefix: string } };
    assert.equal(location.s3.prefix, 'stills/nightly/.reelflow/inputs/');
    assert.ok(!('undatedPrefix' in location.s3));
  });

  it('a named location wins for schedules too', async () => {
    assert.deepEqual(inputLocationFor(await s3Output('nightly/{date}/'), '/mnt/fleet/inputs', 'schedule'), {
      kind: 'dir',
      dir: '/mnt/fleet/inputs',
    });
  });
});
