// The set-up most end-to-end tests share: a real Temporal dev server and the simulator, started
// before the enclosing describe() and stopped after it, and the environment for CLI children.
import { after, before } from 'node:test';
import { startSimulator, type SimHandleExt, type SimOptionsExt } from '../../sim';
import { startTestTemporal, type TestTemporal } from './temporal';

export interface E2eEnvironment {
  temporal: TestTemporal;
  sim: SimHandleExt;
  /** Environment for `reelflow` children: this server as the embedded one, the key in GATEWAY_API_KEY. */
  env: NodeJS.ProcessEnv;
}

export function useTemporalAndSimulator(key: string, simOptions: SimOptionsExt): E2eEnvironment {
  const e2e = {} as E2eEnvironment;
  before(async () => {
    e2e.temporal = await startTestTemporal();
    e2e.sim = await startSimulator({ ...simOptions, keys: [key] });
    e2e.env = { ...e2e.temporal.env, GATEWAY_API_KEY: key };
  });
  after(async () => {
    await e2e.sim?.close();
    await e2e.temporal?.stop();
  });
  return e2e;
}
