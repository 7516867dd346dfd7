// Cron strings as Temporal Schedules read them (ScheduleSpec.cron_string, which `schedule apply` sends
// as spec.cronExpressions): validation with precise messages, and a description in words. The rules
// are the Temporal server's own parser (service/worker/scheduler/calendar.go, parseCronString), not
// Vixie cron's:
//   [CRON_TZ=<zone> | TZ=<zone>] <schedule> [# comment]
//   <schedule>: 5 fields  minute hour day-of-month month day-of-week
//               6 fields  the same, then year
//               7 fields  second, the same, then year
//               @yearly @annually @monthly @weekly @daily @midnight @hourly (lower case, as written)
//               @every <interval>[/<offset>]: epoch + n * interval + offset, e.g. "@every 6h"
// A time matches when every field matches: day-of-month and day-of-week are both required, so
// "0 3 1 * MON" runs only on Mondays that are the 1st.

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  /** Full names in value order; a name may be shortened to `shortest` letters or more. */
  names?: readonly string[];
  shortest?: number;
}

const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

type FieldName = 'second' | 'minute' | 'hour' | 'dayOfMonth' | 'month' | 'dayOfWeek' | 'year';
type Calendar = Record<FieldName, string>;

const FIELDS: Record<FieldName, FieldSpec> = {
  second: { name: 'second', min: 0, max: 59 },
  minute: { name: 'minute', min: 0, max: 59 },
  hour: { name: 'hour', min: 0, max: 23 },
  dayOfMonth: { name: 'day-of-month', min: 1, max: 31 },
  month: { name: 'month', min: 1, max: 12, names: MONTH_NAMES, shortest: 3 },
  dayOfWeek: { name: 'day-of-week', min: 0, max: 7, names: DAY_NAMES, shortest: 2 }, // 7 is Sunday too
  year: { name: 'year', min: 2000, max: 2100 },
};
const FIVE: readonly FieldName[] = ['minute', 'hour', 'dayOfMonth', 'month', 'dayOfWeek'];
const LAYOUTS: Record<number, readonly FieldName[]> = { 5: FIVE, 6: [...FIVE, 'year'], 7: ['second', ...FIVE, 'year'] };

const MACROS = new Map([
  ['@yearly', '0 0 1 1 *'],
  ['@annually', '0 0 1 1 *'],
  ['@monthly', '0 0 1 * *'],
  ['@weekly', '0 0 * * 0'],
  ['@daily', '0 0 * * *'],
  ['@midnight', '0 0 * * *'],
  ['@hourly', '0 * * * *'],
]);
const MAX_COMMENT = 200;
const WHOLE = /^\+?[0-9]+$/; // as Go's strconv.Atoi reads it (a "-" is a range)

const SHAPES =
  '5 fields (minute hour day-of-month month day-of-week) such as "0 3 * * *", 6 (year last), ' +
  `7 (second first, year last), ${[...MACROS.keys()].join(' ')} or "@every 6h"`;

type Parsed = { kind: 'calendar'; zone?: string; fields: Calendar } | { kind: 'interval'; every: string; offsetMs: number };

/** A cron string split as Temporal does: the zone of a CRON_TZ= or TZ= prefix, and the rest. */
export function splitCronZone(cron: string): { zone?: string; expression: string } {
  const text = cron.trim();
  if (!/^(CRON_TZ|TZ)=/.test(text)) return { expression: text };
  const space = text.indexOf(' ');
  if (space < 0) return { expression: '' };
  const zone = text.slice(text.indexOf('=') + 1, space);
  // An empty zone counts as none, and Temporal ignores the zone of an @every interval.
  const expression = text.slice(space + 1).trim();
  return zone === '' || expression.startsWith('@every') ? { expression } : { zone, expression };
}

/** Why a cron string is invalid, or undefined when Temporal accepts it. */
export function cronProblem(cron: string): string | undefined {
  const parsed = parse(cron);
  return typeof parsed === 'string' ? parsed : undefined;
}

function parse(cron: string): Parsed | string {
  const { zone, expression } = splitCronZone(cron);
  if (zone !== undefined && !isValidTimeZone(zone)) return `time zone "${zone}" is not an IANA time zone such as "Europe/Berlin"`;
  const hash = expression.indexOf('#');
  const body = (hash < 0 ? expression : expression.slice(0, hash)).trim();
  const comment = hash < 0 ? '' : expression.slice(hash + 1).trim();
  if (body.startsWith('@every')) return parseInterval(body);
  if (comment.length > MAX_COMMENT) return `comment after "#" is longer than ${MAX_COMMENT} characters`;
  if (body.startsWith('@') && !MACROS.has(body)) return `"${body}" is not a known shorthand; allowed: ${SHAPES}`;
  const texts = (MACROS.get(body) ?? body).split(/\s+/).filter((t) => t !== '');
  const layout = LAYOUTS[texts.length];
  if (!layout) return `needs ${SHAPES}, got ${texts.length} field${texts.length === 1 ? '' : 's'}`;
  const fields: Calendar = { second: '0', minute: '0', hour: '0', dayOfMonth: '*', month: '*', dayOfWeek: '*', year: '*' };
  for (const [i, name] of layout.entries()) {
    const text = texts[i] ?? '';
    const problem = checkField(text, FIELDS[name]);
    if (problem) return problem;
    fields[name] = text;
  }
  return { kind: 'calendar', fields, zone };
}

function parseInterval(body: string): Parsed | string {
  const space = body.indexOf(' ');
  const rest = space < 0 ? '' : body.slice(space + 1);
  const slash = rest.indexOf('/');
  const every = slash < 0 ? rest : rest.slice(0, slash);
  const offset = slash < 0 || slash === rest.length - 1 ? undefined : rest.slice(slash + 1); // "6h/" has none
  const everyMs = durationMs(every);
  const offsetMs = offset === undefined ? 0 : durationMs(offset);
  if (everyMs === undefined)
    return `@every needs an interval such as "@every 6h", "@every 90m" or "@every 1d/3h" (an offset after "/"), got "${body}"`;
  if (offsetMs === undefined) return `@every offset "${offset}" is not a duration such as "30m" or "3h"`;
  if (everyMs < 1000) return `@every interval must be at least 1s, got "${every}"`;
  if (offsetMs < 0) return `@every offset must not be negative, got "${offset}"`;
  if (offsetMs >= everyMs) return `@every offset (${offset}) must be shorter than the interval (${every})`;
  return { kind: 'interval', every, offsetMs };
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1e3, m: 6e4, h: 36e5, d: 864e5 };
const DURATION_PART = /(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/g;

/** A Go duration ("90m", "1h30m", "1.5h") with Temporal's extra unit d (24h), in milliseconds. */
function durationMs(text: string): number | undefined {
  const sign = text.startsWith('-') ? -1 : 1;
  const unsigned = text.replace(/^[+-]/, '');
  if (unsigned === '0') return 0;
  if (unsigned.replace(DURATION_PART, '') !== '' || unsigned === '') return undefined;
  let ms = 0;
  for (const [, n, unit] of unsigned.matchAll(DURATION_PART)) ms += Number(n) * (UNIT_MS[unit ?? ''] ?? 0);
  return sign * ms;
}

/** A value of a field: a whole number or, where the field has names, a name or its prefix. */
function value(text: string, spec: FieldSpec): number | string {
  const lower = text.toLowerCase();
  const named = text.length >= (spec.shortest ?? Infinity) ? (spec.names?.findIndex((n) => n.toLowerCase().startsWith(lower)) ?? -1) : -1;
  const n = named >= 0 ? spec.min + named : WHOLE.test(text) ? Number(text) : undefined;
  if (n === undefined) {
    const names = spec.names ? ` or a name such as "${spec.names[1]?.slice(0, 3).toUpperCase()}"` : '';
    return `${spec.name} field has "${text}", which is not a number${names}`;
  }
  if (n < spec.min || n > spec.max) return `${spec.name} ${text} is out of range ${spec.min}-${spec.max}`;
  return n;
}

function checkField(text: string, spec: FieldSpec): string | undefined {
  for (const part of text.split(',')) {
    const [range = '', step, extra] = part.split('/');
    if (extra !== undefined) return `${spec.name} field "${part}" has more than one "/"`;
    if (step !== undefined && !(WHOLE.test(step) && Number(step) >= 1))
      return `${spec.name} step "${step}" must be a whole number of at least 1`;
    if (range === '*') continue;
    const [from = '', to, more] = range.split('-');
    if (more !== undefined) return `${spec.name} field "${part}" has more than one "-"`;
    const start = value(from, spec);
    if (typeof start === 'string') return start;
    const end = to === undefined ? start : value(to, spec);
    if (typeof end === 'string') return end;
    if (end < start) return `${spec.name} range "${range}" runs backwards`;
  }
  return undefined;
}

/** The schedule in words, e.g. "at 03:00 every day (Europe/Berlin)"; a CRON_TZ= zone wins over `timezone`. */
export function describeCron(cron: string, timezone: string): string {
  const parsed = parse(cron);
  if (typeof parsed === 'string') return `invalid cron "${cron}"`;
  if (parsed.kind === 'interval') {
    const start = new Date(parsed.offsetMs).toISOString().slice(0, 19).replace('T', ' ').replace(/:00$/, '');
    // Intervals count from the Unix epoch (plus the offset), so no time zone applies.
    return `every ${parsed.every}, counted from ${start} UTC`;
  }
  const f = parsed.fields;
  const year = f.year === '*' ? '' : ` in ${listWords(f.year, FIELDS.year, String)}`;
  return `${timeWords(f)} ${dayWords(f)}${year} (${parsed.zone ?? timezone})`;
}

function listWords(text: string, spec: FieldSpec, word: (n: number) => string): string {
  return text
    .split(',')
    .map((part) => {
      const [range = '*', step] = part.split('/');
      const [a = '', b] = range.split('-');
      const name = (v: string): string => {
        const n = value(v, spec);
        return typeof n === 'number' ? word(n) : v;
      };
      // "x/y" runs from x to the field's maximum.
      const span = range === '*' ? '' : b !== undefined ? `${name(a)} through ${name(b)}` : name(a);
      return step === undefined ? span : `every ${Number(step)}${span ? ` from ${span}` : ''}`;
    })
    .join(', ');
}

function pad(n: string): string {
  return String(Number(n)).padStart(2, '0');
}

function timeWords({ second, minute, hour }: Calendar): string {
  if (WHOLE.test(second) && WHOLE.test(minute) && WHOLE.test(hour)) {
    return `at ${pad(hour)}:${pad(minute)}${Number(second) === 0 ? '' : `:${pad(second)}`}`;
  }
  const seconds =
    second === '*'
      ? 'every second'
      : /^\*\/[0-9]+$/.test(second)
        ? `every ${second.slice(2)} seconds`
        : `at second ${listWords(second, FIELDS.second, String)}`;
  if (minute === '*' && hour === '*' && seconds.startsWith('every')) return seconds; // "every 10 seconds" says it all
  let time: string;
  if (WHOLE.test(minute) && hour === '*')
    time = Number(minute) === 0 ? 'every hour, on the hour' : `every hour at minute ${Number(minute)}`;
  else if (minute === '*' && hour === '*') time = 'every minute';
  else if (/^\*\/[0-9]+$/.test(minute) && hour === '*') time = `every ${minute.slice(2)} minutes`;
  else {
    const m = minute === '*' ? 'every minute' : `minute ${listWords(minute, FIELDS.minute, String)}`;
    const h = hour === '*' ? 'of every hour' : `past hour ${listWords(hour, FIELDS.hour, String)}`;
    time = `at ${m} ${h}`;
  }
  return WHOLE.test(second) && Number(second) === 0 ? time : `${time}, ${seconds}`;
}

function dayWords({ dayOfMonth, month, dayOfWeek }: Calendar): string {
  const dom = `day ${listWords(dayOfMonth, FIELDS.dayOfMonth, String)} of the month`;
  const dow = listWords(dayOfWeek, FIELDS.dayOfWeek, (n) => DAY_NAMES[n % 7] ?? String(n));
  let days: string;
  if (dayOfMonth === '*') days = dayOfWeek === '*' ? 'every day' : `on ${dow}`;
  // Temporal requires both, unlike Vixie cron, which runs on either.
  else days = dayOfWeek === '*' ? `on ${dom}` : `on ${dow} when it is ${dom}`;
  return month === '*' ? days : `${days} in ${listWords(month, FIELDS.month, (n) => MONTH_NAMES[n - 1] ?? String(n))}`;
}

let zoneList: readonly string[] | undefined;

/** IANA time zones this runtime knows, for suggestions. */
export function knownTimeZones(): readonly string[] {
  zoneList ??= [...Intl.supportedValuesOf('timeZone'), 'UTC'];
  return zoneList;
}

export function isValidTimeZone(tz: string): boolean {
  if (tz.trim() === '') return false;
  // Temporal's server (Go) reads zone names case-sensitively, Intl does not: "europe/berlin" fails there.
  const lower = tz.toLowerCase();
  const known = knownTimeZones().find((z) => z.toLowerCase() === lower);
  if (known !== undefined) return known === tz;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
