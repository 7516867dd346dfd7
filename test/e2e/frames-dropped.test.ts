// A chain through a gateway release that drops frames (docs/chains.md, "Gateways that drop frames"):
// new-api v0.10.0's Seedance channel sends its upstream only the model and the prompt. `doctor` and
// `run`'s preflight read the release at new-api's public /api/status and warn, naming the shots
// whose frames will not arrive; neither refuses. Another release, or another gateway, gives no warning.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startSimulator, type SimHandleExt } from '../../sim';
import type { SimProfile } from '../../sim/profile';
import { runCli } from '../support/cli';
import { tempDir } from '../support/jobs';
import { writeChainJob } from '../support/chain-jobs';
import { startTestTemporal, type TestTemporal } from '../support/temporal';

const KEY = 'sk-test-frames-dropped-0123456789';

function chainJob(dir: string, name: string, baseUrls: string[]): string {
  const items = [
    '  - id: open',
    '    prompt: "the keeper climbs"',
    '  - id: door',
    '    prompt: "he opens the door"',
    '    references:',
    '      - image: { last_frame_of: open }',
    '  - id: alone',
    '    prompt: "the sea at night"',
  ];
  return writeChainJob(dir, { name, baseUrls, items });
}

describe('a gateway that drops frames', { timeout: 240_000 }, () => {
  let temporal: TestTemporal;
  const sims = new Map<SimProfile, SimHandleExt>();
  let env: NodeJS.ProcessEnv;

  before(async () => {
    temporal = await startTestTemporal();
    for (const profile of ['default', 'new-api', 'new-api-0.10'] as const) {
      sims.set(profile, await startSimulator({ ports: [0], keys: [KEY], profile, renderMs: [200, 400], refreshMs: 0 }));
    }
    env = { ...temporal.env, GATEWAY_API_KEY: KEY };
  });
  after(async () => {
    await Promise.all([...sims.values()].map((s) => s.close()));
    await temporal?.stop();
  });

  const framesLine = (stdout: string) => stdout.split('\n').find((l) => /^(ok|warn|FAIL)\s+frames: /.test(l));

  it('doctor warns for new-api v0.10.0, naming the shots whose frames will not reach the provider; not for others', async () => {
    const dir = tempDir();
    const old = sims.get('new-api-0.10')!;
    const result = await runCli(['doctor', chainJob(dir, 'doctor-old', old.urls)], { env });
    const line = framesLine(result.stdout);
    assert.ok(line, result.stdout);
    assert.match(line, /^warn\s+frames: /);
    assert.match(
      line,
      new RegExp(
        `${old.urls[0]!.replace(/[.]/g, '\\.')} \\(new-api v0\\.10\\.0\\) sends a Seedance provider only the model and the prompt`,
      ),
    );
    // `open` is asked for its last frame, `door` starts from it; `alone` sends no frame.
    assert.match(line, /the frames of open, door \(/);
    assert.ok(!/the frames of [^(]*alone/.test(line), line);
    assert.ok(!result.stdout.includes(KEY) && !result.stderr.includes(KEY));
    for (const profile of ['new-api', 'default'] as const) {
      const other = await runCli(['doctor', chainJob(dir, `doctor-${profile}`, sims.get(profile)!.urls)], { env });
      assert.equal(framesLine(other.stdout), undefined, `${profile}:\n${other.stdout}`);
    }
  });

  it("run's preflight warns for new-api v0.10.0 and runs the job all the same", async () => {
    const dir = tempDir();
    const result = await runCli(['run', chainJob(dir, 'run-old', sims.get('new-api-0.10')!.urls)], { env });
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout + result.stderr,
      /warning: .*\(new-api v0\.10\.0\) sends a Seedance provider only the model and the prompt: the frames of open, door/,
    );
    const plain = await runCli(['run', chainJob(tempDir(), 'run-default', sims.get('default')!.urls)], { env });
    assert.equal(plain.code, 0, plain.stderr);
    assert.ok(!/only the model and the prompt/.test(plain.stdout + plain.stderr), plain.stderr);
  });
});
