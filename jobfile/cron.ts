// Five-field cron expressions: validation with precise messages, and a description in words.

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;
const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day-of-week', min: 0, max: 7, names: DAYS },
];
const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *', '@monthly': '0 0 1 * *', '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@hourly': '0 * * * *',
};

function value(text: string, spec: FieldSpec): number | string {
  const upper = text.toUpperCase();
  const named = spec.names?.indexOf(upper) ?? -1;
  if (named >= 0) return spec.names === MONTHS ? named + 1 : named;
  if (!/^[0-9]+$/.test(text)) return `${spec.name} field has "${text}", which is not a number`;
  const n = Number(text);
  if (n < spec.min || n > spec.max) return `${spec.name} ${n} is out of range ${spec.min}-${spec.max}`;
  return n;
}

function checkField(text: string, spec: FieldSpec): string | undefined {
  for (const part of text.split(',')) {
    if (part === '') return `${spec.name} field has an empty list entry`;
    const [range, step, extra] = part.split('/');
    if (extra !== undefined || range === undefined || range === '') return `${spec.name} field "${part}" is malformed`;
    if (step !== undefined && (!/^[0-9]+$/.test(step) || Number(step) === 0)) return `${spec.name} step "${step}" must be a positive number`;
    if (range === '*') continue;
    const bounds = range.split('-');
    if (bounds.length > 2) return `${spec.name} field "${part}" is malformed`;
    const nums: number[] = [];
    for (const b of bounds) {
      const v = value(b, spec);
      if (typeof v === 'string') return v;
      nums.push(v);
    }
    if (nums.length === 2 && (nums[0] ?? 0) > (nums[1] ?? 0)) return `${spec.name} range "${range}" runs backwards`;
  }
  return undefined;
}

/** Expands an @macro to its five fields; returns the input otherwise. */
export function expandCronMacro(cron: string): string {
  return MACROS[cron.trim().toLowerCase()] ?? cron.trim();
}

/** Why a cron expression is invalid, or undefined when it is valid. */
export function cronProblem(cron: string): string | undefined {
  const fields = expandCronMacro(cron).split(/\s+/);
  if (fields.length !== 5 || fields[0] === '') {
    return `needs 5 fields (minute hour day-of-month month day-of-week) such as "0 3 * * *", got ${fields[0] === '' ? 0 : fields.length}`;
  }
  for (let i = 0; i < 5; i++) {
    const problem = checkField(fields[i] ?? '', FIELDS[i] as FieldSpec);
    if (problem) return problem;
  }
  return undefined;
}

const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September',
  'October', 'November', 'December'];

function listWords(text: string, spec: FieldSpec, word: (n: number) => string): string {
  return text.split(',').map((part) => {
    const [range = '*', step] = part.split('/');
    const [a, b] = range.split('-');
    const from = range === '*' ? undefined : value(a ?? '', spec);
    const to = b === undefined ? undefined : value(b, spec);
    const fmt = (v: number | string | undefined): string => (typeof v === 'number' ? word(v) : String(v));
    let s = range === '*' ? '' : to === undefined ? fmt(from) : `${fmt(from)} through ${fmt(to)}`;
    if (step !== undefined) s = `every ${step}${s ? ` from ${s}` : ''}`;
    return s;
  }).join(', ');
}

function pad(n: string): string {
  return n.padStart(2, '0');
}

/** The schedule in words, e.g. "at 03:00 every day (Europe/Berlin)". */
export function describeCron(cron: string, timezone: string): string {
  if (cronProblem(cron)) return `invalid cron "${cron}"`;
  const [minute = '*', hour = '*', dom = '*', month = '*', dow = '*'] = expandCronMacro(cron).split(/\s+/);
  const single = /^[0-9]+$/;
  let time: string;
  if (single.test(minute) && single.test(hour)) time = `at ${pad(hour)}:${pad(minute)}`;
  else if (single.test(minute) && hour === '*') time = minute === '0' ? 'every hour, on the hour' : `every hour at minute ${minute}`;
  else if (minute === '*' && hour === '*') time = 'every minute';
  else if (/^\*\/[0-9]+$/.test(minute) && hour === '*') time = `every ${minute.slice(2)} minutes`;
  else {
    const m = minute === '*' ? 'every minute' : `minute ${listWords(minute, FIELDS[0] as FieldSpec, String)}`;
    const h = hour === '*' ? 'of every hour' : `past hour ${listWords(hour, FIELDS[1] as FieldSpec, String)}`;
    time = `at ${m} ${h}`;
  }
  const days: string[] = [];
  if (dom !== '*') days.push(`on day ${listWords(dom, FIELDS[2] as FieldSpec, String)} of the month`);
  if (dow !== '*') days.push(`on ${listWords(dow, FIELDS[4] as FieldSpec, (n) => DAY_NAMES[n] ?? String(n))}`);
  let when = days.length === 0 ? 'every day' : days.join(' or ');
  if (month !== '*') when += ` in ${listWords(month, FIELDS[3] as FieldSpec, (n) => MONTH_NAMES[n - 1] ?? String(n))}`;
  return `${time} ${when} (${timezone})`;
}

let zoneList: readonly string[] | undefined;

/** IANA time zones this runtime knows, for suggestions. */
export function knownTimeZones(): readonly string[] {
  zoneList ??= [...Intl.supportedValuesOf('timeZone'), 'UTC'];
  return zoneList;
}

export function isValidTimeZone(tz: string): boolean {
  if (tz.trim() === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
