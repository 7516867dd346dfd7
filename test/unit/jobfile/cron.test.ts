// Cron strings as Temporal Schedules read them. Cases come from Temporal's documentation:
// - [cron_string] ScheduleSpec.cron_string in temporalio/api temporal/api/schedule/v1/message.proto, also
//   https://typescript.temporal.io/api/interfaces/client.ScheduleSpec#cronexpressions (with its example
//   "0 12 * * MON-WED,FRI is every M/Tu/W/F at noon")
// - [CalendarSpec] the same file: "A timestamp matches if all fields match ... the special case that some
//   cron implementations have for treating day_of_month and day_of_week as "or" instead of "and" ... is
//   not implemented"; "day_of_week can accept 0 or 7 as Sunday"; names or abbreviations
// - [IntervalSpec] the same file: "epoch + n * interval + phase ... an interval of 1 hour with phase of
//   19 minutes would match every xx:19:00"
// - [calendar.go] the server's parser, temporalio/temporal service/worker/scheduler/calendar.go
//   (makeRange's comment: "3/5 matches 3,8,13,18,23,28", "1-5/2,8-16/3,2 matches 1,2,3,5,8,11,14")
// test/e2e/schedule-cron.test.ts checks the same verdicts against a real Temporal server.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cronProblem, describeCron, isValidTimeZone, splitCronZone } from '../../../jobfile/cron';
import { errorsOf, HEAD, plan } from './helpers';

const SHAPES =
  'needs 5 fields (minute hour day-of-month month day-of-week) such as "0 3 * * *", 6 (year last), ' +
  '7 (second first, year last), @yearly @annually @monthly @weekly @daily @midnight @hourly or "@every 6h"';

describe('cron: what Temporal accepts', () => {
  it('accepts every documented form', () => {
    for (const ok of [
      '0 12 * * MON-WED,FRI', // [cron_string] the example
      '0 3 1 * MON',
      '0 3 * * *',
      '*/15 * * * *',
      '0 9-17 * * MON-FRI',
      '0 0 1,15 * *',
      '5 4 * JAN,jul 0',
      '0 0 * * 7',
      '0 0 * * 0-7', // [CalendarSpec] 0 or 7 is Sunday
      '0 9 * * mo',
      '0 9 * * Monday',
      '0 0 1 janu *',
      '0 0 1 March *', // [calendar.go] name prefixes: 2+ letters for days, 3+ for months
      '3/5 * * * *',
      '1-5/2,8-16/3,2 * * * *', // [calendar.go]
      '0 12 * * * 2031', // [cron_string] 6 fields: year last
      '30 0 3 * * * 2030', // [cron_string] 7 fields: second first, year last
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
      '@every 30s', // [cron_string] @every <interval>[/<phase>]
      'CRON_TZ=Asia/Tokyo 0 9 * * *',
      'TZ=America/New_York 0 9 * * *', // [cron_string] zone prefix
      '0 3 * * * # nightly render', // [cron_string] "#" comment
    ]) {
      assert.equal(cronProblem(ok), undefined, ok);
    }
  });

  it('rejects the rest, saying what is allowed', () => {
    const cases: [string, string][] = [
      ['', `${SHAPES}, got 0 fields`],
      ['0 3 * *', `${SHAPES}, got 4 fields`],
      ['0 0 0 3 * * * 2030', `${SHAPES}, got 8 fields`],
      ['@Daily', `"@Daily" is not a known shorthand; allowed: ${SHAPES.replace('needs ', '')}`],
      ['@reboot', `"@reboot" is not a known shorthand; allowed: ${SHAPES.replace('needs ', '')}`],
      ['60 * * * *', 'minute 60 is out of range 0-59'],
      ['0 24 * * *', 'hour 24 is out of range 0-23'],
      ['0 0 0 * *', 'day-of-month 0 is out of range 1-31'],
      ['0 0 * 13 *', 'month 13 is out of range 1-12'],
      ['0 0 * * 8', 'day-of-week 8 is out of range 0-7'],
      ['0 0 * * * 1999', 'year 1999 is out of range 2000-2100'],
      ['60 0 0 * * * *', 'second 60 is out of range 0-59'],
      ['*/0 * * * *', 'minute step "0" must be a whole number of at least 1'],
      ['*/5/2 * * * *', 'minute field "*/5/2" has more than one "/"'],
      ['0 5-2 * * *', 'hour range "5-2" runs backwards'],
      ['0 0 * * SAT-SUN', 'day-of-week range "SAT-SUN" runs backwards'],
      ['0 0 * * 1-2-3', 'day-of-week field "1-2-3" has more than one "-"'],
      ['0 0 * * M', 'day-of-week field has "M", which is not a number or a name such as "MON"'],
      ['0 0 1 ma *', 'month field has "ma", which is not a number or a name such as "FEB"'],
      ['0 0 L * *', 'day-of-month field has "L", which is not a number'], // Quartz forms are not Temporal's
      ['0 0 ? * MON', 'day-of-month field has "?", which is not a number'],
      ['@every', '@every needs an interval such as "@every 6h", "@every 90m" or "@every 1d/3h" (an offset after "/"), got "@every"'],
      ['@every 6x', '@every needs an interval such as "@every 6h", "@every 90m" or "@every 1d/3h" (an offset after "/"), got "@every 6x"'],
      ['@every 6h/soon', '@every offset "soon" is not a duration such as "30m" or "3h"'],
      ['@every 500ms', '@every interval must be at least 1s, got "500ms"'],
      ['@every 1h/1h', '@every offset (1h) must be shorter than the interval (1h)'],
      ['CRON_TZ=Mars/Olympus 0 3 * * *', 'time zone "Mars/Olympus" is not an IANA time zone such as "Europe/Berlin"'],
      ['CRON_TZ=europe/berlin 0 3 * * *', 'time zone "europe/berlin" is not an IANA time zone such as "Europe/Berlin"'],
      ['CRON_TZ=Europe/Berlin', `${SHAPES}, got 0 fields`],
      [`0 3 * * * # ${'x'.repeat(201)}`, 'comment after "#" is longer than 200 characters'],
    ];
    for (const [cron, problem] of cases) assert.equal(cronProblem(cron), problem, cron);
  });
});

describe("cron: in words, with Temporal's meaning", () => {
  it('day-of-month and day-of-week must both match [CalendarSpec]', () => {
    assert.equal(describeCron('0 3 1 * MON', 'UTC'), 'at 03:00 on Monday when it is day 1 of the month (UTC)');
    assert.equal(describeCron('0 0 1-7 * SAT,SUN', 'UTC'), 'at 00:00 on Saturday, Sunday when it is day 1 through 7 of the month (UTC)');
  });

  it('fields, names, steps and shorthands', () => {
    assert.equal(describeCron('0 12 * * MON-WED,FRI', 'UTC'), 'at 12:00 on Monday through Wednesday, Friday (UTC)');
    assert.equal(describeCron('0 3 * * *', 'Europe/Berlin'), 'at 03:00 every day (Europe/Berlin)');
    assert.equal(describeCron('*/15 * * * *', 'UTC'), 'every 15 minutes every day (UTC)');
    assert.equal(describeCron('30 6 * * 1-5', 'UTC'), 'at 06:30 on Monday through Friday (UTC)');
    assert.equal(describeCron('0 0 1 1 *', 'UTC'), 'at 00:00 on day 1 of the month in January (UTC)');
    assert.equal(describeCron('0 * * * *', 'UTC'), 'every hour, on the hour every day (UTC)');
    assert.equal(describeCron('3/5 * * * *', 'UTC'), 'at minute every 5 from 3 of every hour every day (UTC)');
    assert.equal(describeCron('0 0 * * 7', 'UTC'), 'at 00:00 on Sunday (UTC)');
    assert.equal(describeCron('0 9 * janu mo', 'UTC'), 'at 09:00 on Monday in January (UTC)');
    assert.equal(describeCron('@weekly', 'UTC'), 'at 00:00 on Sunday (UTC)');
  });

  it('6 fields add a year, 7 a second before it [cron_string]', () => {
    assert.equal(describeCron('0 12 * * * 2031', 'UTC'), 'at 12:00 every day in 2031 (UTC)');
    assert.equal(describeCron('30 0 3 * * * 2030', 'UTC'), 'at 03:00:30 every day in 2030 (UTC)');
    assert.equal(describeCron('*/10 * * * * * *', 'UTC'), 'every 10 seconds every day (UTC)');
  });

  it('@every counts from the Unix epoch, in no time zone [IntervalSpec]', () => {
    assert.equal(describeCron('@every 6h', 'Europe/Berlin'), 'every 6h, counted from 1970-01-01 00:00 UTC');
    assert.equal(describeCron('@every 1h/19m', 'UTC'), 'every 1h, counted from 1970-01-01 00:19 UTC');
  });

  it('a CRON_TZ= zone is the zone of the schedule; a "#" starts a comment [cron_string]', () => {
    assert.equal(describeCron('CRON_TZ=Asia/Tokyo 0 9 * * *', 'UTC'), 'at 09:00 every day (Asia/Tokyo)');
    assert.equal(describeCron('0 3 * * * # nightly render', 'UTC'), 'at 03:00 every day (UTC)');
    // Quartz's "nth weekday" is not Temporal's: "#2" is a comment, so this runs every Monday.
    assert.equal(describeCron('0 0 * * 1#2', 'UTC'), 'at 00:00 on Monday (UTC)');
  });
});

describe('cron: time zones', () => {
  it('splits off CRON_TZ= and TZ=, as Temporal does (which ignores the zone of an @every)', () => {
    assert.deepEqual(splitCronZone(' CRON_TZ=Asia/Tokyo 0 9 * * * '), { zone: 'Asia/Tokyo', expression: '0 9 * * *' });
    assert.deepEqual(splitCronZone('TZ=America/New_York @daily'), { zone: 'America/New_York', expression: '@daily' });
    assert.deepEqual(splitCronZone('0 9 * * *'), { expression: '0 9 * * *' });
    assert.deepEqual(splitCronZone('CRON_TZ=Asia/Tokyo @every 6h'), { expression: '@every 6h' });
  });

  it('zone names are case-sensitive, as the server reads them', () => {
    assert.equal(isValidTimeZone('Europe/Berlin'), true);
    assert.equal(isValidTimeZone('US/Eastern'), true);
    assert.equal(isValidTimeZone('UTC'), true);
    assert.equal(isValidTimeZone('europe/berlin'), false);
    assert.equal(isValidTimeZone('utc'), false);
  });

  it('the plan takes the zone from CRON_TZ= and sends the cron without it', async () => {
    const p = await plan(`${HEAD}items:\n  - prompt: hi\nschedule:\n  cron: "CRON_TZ=Asia/Tokyo 0 9 * * *"\n`);
    assert.deepEqual(p.schedule, {
      cron: '0 9 * * *',
      timezone: 'Asia/Tokyo',
      overlap: 'skip',
      description: 'at 09:00 every day (Asia/Tokyo)',
    });
  });

  it('a zone in both places is an error: Temporal takes it from one place only', async () => {
    assert.deepEqual(
      await errorsOf(`${HEAD}items:\n  - prompt: hi\nschedule:\n  cron: "TZ=Asia/Tokyo 0 9 * * *"\n  timezone: Europe/Berlin\n`),
      [
        '10:13: schedule.timezone "Europe/Berlin" and the cron\'s TZ=Asia/Tokyo both set the time zone; ' +
          'Temporal takes it from one place only, so remove one',
      ],
    );
  });
});
