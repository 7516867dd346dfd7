// The e2e tests' command runner (test/support/cli.ts): a test that times out while a command it
// started is still running must not leave that command behind (CI once found CLI processes of a
// timed-out test still polling after the suite).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isAlive } from '../support/cli';
import { tempDir } from '../support/jobs';

describe('test/support/cli.ts', () => {
  it('kills a command that a timed-out test left running', () => {
    const dir = tempDir('reelflow-cli-support-');
    try {
      const pidFile = join(dir, 'pid');
      const testFile = join(dir, 'times-out.test.ts');
      const support = join(__dirname, '..', 'support', 'cli.ts');
      writeFileSync(
        testFile,
        [
          `import { writeFileSync } from 'node:fs';`,
          `import { it } from 'node:test';`,
          `import { startCli } from ${JSON.stringify(support)};`,
          `it('never ends', async () => {`,
          `  const run = startCli(['sim', '--port', '0']);`,
          `  writeFileSync(${JSON.stringify(pidFile)}, String(run.child.pid));`,
          `  await run.done;`,
          `});`,
        ].join('\n'),
      );
      const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', '--test-timeout=3000', testFile], {
        encoding: 'utf8',
        timeout: 60_000,
        // Without the runner's own variable, or the inner run thinks it is nested and runs nothing.
        env: { ...process.env, NODE_TEST_CONTEXT: undefined },
      });
      assert.equal(result.signal, null, `the test file's process hung: ${result.stdout}`);
      assert.match(result.stdout, /^not ok 1 /m, 'the inner test timed out');
      const pid = Number(readFileSync(pidFile, 'utf8'));
      let gone = false;
      for (let i = 0; i < 50 && !gone; i++) {
        gone = !isAlive(pid);
        if (!gone) spawnSync('sleep', ['0.1']);
      }
      if (!gone) process.kill(pid, 'SIGKILL');
      assert.ok(gone, `the command (pid ${pid}) outlived its test file`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
