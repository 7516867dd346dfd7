// Temporal as the oracle for cron strings: for each case, a real Temporal development server either
// creates a (paused) Schedule or refuses it, and `cronProblem` must say the same. Where it matters,
// the server's own next action times show what the string means (see test/unit/jobfile/cron.test.ts
// for the documentation the cases come from).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, Connection, type ScheduleSpec } from '@temporalio/client';
import { loadJobFile } from '../../jobfile';
import { cronProblem } from '../../jobfile/cron';
import { tempDir } from '../support/jobs';
import { startTestTemporal, type TestTemporal } from '../support/temporal';

const ACCEPTED = [
  '0 12 * * MON-WED,FRI',
  '0 3 1 * MON',
  '*/15 * * * *',
  '0 9-17 * * MON-FRI',
  '5 4 * JAN,jul 0',
  '0 0 * * 7',
  '0 0 * * 0-7',
  '0 9 * * mo',
  '0 0 1 janu *',
  '3/5 * * * *',
  '1-5/2,8-16/3,2 * * * *',
  '+5 * * * *',
  '0 0 29 2 * 2001',
  '0 12 * * * 2031',
  '30 0 3 * * * 2030',
  '*/10 * * * * * *',
  '@yearly',
  '@annually',
  '@monthly',
  '@weekly',
  '@daily',
  '@midnight',
  '@hourly',
  '@every 6h',
  '@every 1h/19m',
  '@every 1d/3h',
  '@every 90m',
  '@every 1h30m',
  '@every 1.5h',
  '@every 28d',
  '@every 1d/',
  'CRON_TZ=Asia/Tokyo 0 9 * * *',
  'TZ=America/New_York 0 9 * * *',
  'CRON_TZ=US/Eastern 0 9 * * *',
  // Temporal's quirks, followed: an empty zone is none, an @every ignores its zone, "#" starts a comment.
  'CRON_TZ= 0 3 * * *',
  'TZ=Not/AZone @every 6h',
  '0 3 * * * # nightly',
  '0 0 * * 1#2',
];
const REJECTED = [
  '',
  '0 3 * *',
  '0 0 0 3 * * * 2030',
  '@Daily',
  '@reboot',
  '60 * * * *',
  '0 24 * * *',
  '0 0 0 * *',
  '0 0 * 13 *',
  '0 0 * * 8',
  '0 0 * * * 1999',
  '60 0 0 * * * *',
  '*/0 * * * *',
  '*/5/2 * * * *',
  '5/ * * * *',
  '0 5-2 * * *',
  '0 0 * * SAT-SUN',
  '0 0 * * 1-2-3',
  '0 0 * * M',
  '0 0 1 ma *',
  '0 0 L * *',
  '0 0 ? * MON',
  '-5 * * * *',
  '@every',
  '@every 6x',
  '@every 6h/soon',
  '@every 500ms',
  '@every 1h/1h',
  '@every 1h/-5m',
  '@every 1h 30m',
  'CRON_TZ=Mars/Olympus 0 3 * * *',
  'CRON_TZ=europe/berlin 0 3 * * *',
  'CRON_TZ=Europe/Berlin',
  `0 3 * * * # ${'x'.repeat(201)}`,
];

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe("cron strings: our verdict is Temporal's", { timeout: 240_000 }, () => {
  let temporal: TestTemporal;
  let client: Client;
  let n = 0;

  before(async () => {
    temporal = await startTestTemporal();
    client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
  });
  after(async () => {
    await client?.connection.close();
    await temporal?.stop();
  });

  /** The server's next action times, or undefined when it refuses the spec. */
  async function serverTimes(spec: ScheduleSpec): Promise<Date[] | undefined> {
    const handle = await client.schedule
      .create({
        scheduleId: `cron-oracle-${++n}`,
        spec,
        state: { paused: true },
        action: { type: 'startWorkflow', workflowType: 'JobWorkflow', taskQueue: 'cron-oracle', args: [] },
      })
      .catch((error: unknown) => {
        if (error instanceof TypeError) return undefined; // how the client throws the server's "Invalid schedule spec"
        throw error;
      });
    return handle && (await handle.describe()).info.nextActionTimes;
  }
  const times = async (cron: string, timezone?: string): Promise<Date[]> => {
    const found = await serverTimes({ cronExpressions: [cron], timezone });
    assert.ok(found && found.length > 0, `the server accepts "${cron}" and gives next times`);
    return found;
  };

  it('accepts what we accept and refuses what we refuse', async () => {
    const disagree: string[] = [];
    for (const cron of [...ACCEPTED, ...REJECTED]) {
      const ours = cronProblem(cron) === undefined;
      const theirs = (await serverTimes({ cronExpressions: [cron] })) !== undefined;
      if (ours !== theirs || ours !== ACCEPTED.includes(cron)) disagree.push(`"${cron}": ours ${ours}, Temporal ${theirs}`);
    }
    assert.deepEqual(disagree, []);
  });

  it('day-of-month and day-of-week both must match: "0 3 1 * MON" runs on Mondays that are the 1st', async () => {
    for (const t of await times('0 3 1 * MON')) {
      assert.deepEqual(
        [t.getUTCDay(), t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds()],
        [1, 1, 3, 0, 0],
        t.toISOString(),
      );
    }
    for (const t of await times('0 12 * * MON-WED,FRI'))
      assert.ok([1, 2, 3, 5].includes(t.getUTCDay()) && t.getUTCHours() === 12, t.toISOString());
  });

  it('6 fields end with a year, 7 start with a second', async () => {
    for (const t of await times('0 12 * * * 2031'))
      assert.deepEqual([t.getUTCFullYear(), t.getUTCHours(), t.getUTCMinutes()], [2031, 12, 0]);
    for (const t of await times('30 0 3 * * * 2030'))
      assert.deepEqual([t.getUTCFullYear(), t.getUTCHours(), t.getUTCSeconds()], [2030, 3, 30]);
  });

  it('@every counts from the Unix epoch plus the offset', async () => {
    for (const t of await times('@every 6h')) assert.equal(t.getTime() % (6 * HOUR), 0, t.toISOString());
    for (const t of await times('@every 1h/19m')) assert.equal(t.getTime() % HOUR, 19 * 60_000, t.toISOString());
    for (const t of await times('@every 28d')) assert.equal((t.getTime() - Date.UTC(2022, 1, 17)) % (28 * DAY), 0, t.toISOString());
  });

  it('"#" starts a comment: Quartz\'s "1#2" (second Monday) runs every Monday', async () => {
    const mondays = await times('0 0 * * 1#2');
    assert.equal(mondays[1]!.getTime() - mondays[0]!.getTime(), 7 * DAY);
  });

  it("a CRON_TZ= zone becomes the plan's time zone, and the server runs the plan's schedule in it", async () => {
    const dir = tempDir('reelflow-cron-');
    const job = join(dir, 'tokyo.yaml');
    writeFileSync(
      job,
      'name: tokyo\ngateway:\n  base_urls: [http://127.0.0.1:8787]\ndefaults:\n  model: m\nitems:\n  - prompt: hi\n' +
        'schedule:\n  cron: "CRON_TZ=Asia/Tokyo 0 9 * * *"\n',
    );
    const loaded = await loadJobFile(job);
    assert.ok(loaded.ok && loaded.plan.schedule);
    const { cron, timezone } = loaded.plan.schedule;
    // As `schedule apply` sends it: the expression and the zone apart.
    for (const t of await times(cron, timezone)) assert.deepEqual([t.getUTCHours(), t.getUTCMinutes()], [0, 0], t.toISOString()); // 09:00 in Tokyo
    // The same zone in both places would be refused by the server when they differ; the job file refuses both.
    assert.equal(await serverTimes({ cronExpressions: ['CRON_TZ=Asia/Tokyo 0 9 * * *'], timezone: 'Europe/Berlin' }), undefined);
  });
});
