// --log-level and REELFLOW_LOG_LEVEL (docs/logs.md): the flag wins, then the environment, then info;
// anything else is refused naming the allowed levels.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseLogLevel, LogLevelError } from '../../../worker/log';

describe('chooseLogLevel', () => {
  it('takes the flag, else the environment, else info', () => {
    assert.equal(chooseLogLevel('debug', { REELFLOW_LOG_LEVEL: 'error' }), 'debug');
    assert.equal(chooseLogLevel(undefined, { REELFLOW_LOG_LEVEL: 'WARN' }), 'warn');
    assert.equal(chooseLogLevel(undefined, {}), 'info');
    assert.equal(chooseLogLevel(undefined, { REELFLOW_LOG_LEVEL: '' }), 'info');
  });

  it('refuses an unknown level, naming where it came from and the allowed ones', () => {
    assert.throws(
      () => chooseLogLevel('trace', {}),
      (e: Error) => {
        assert.ok(e instanceof LogLevelError);
        assert.equal(e.message, '--log-level "trace" is not a log level: use one of debug, info, warn, error');
        return true;
      },
    );
    assert.throws(
      () => chooseLogLevel(undefined, { REELFLOW_LOG_LEVEL: 'loud' }),
      /^Error: REELFLOW_LOG_LEVEL "loud" is not a log level: use one of debug, info, warn, error$/,
    );
  });
});
