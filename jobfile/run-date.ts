// The `{date}` of a run: YYYY-MM-DD. Scheduled runs date their outputs in the schedule's zone.

/** YYYY-MM-DD of `at` in `timeZone`, or in the machine's own zone when none is given. */
export function dateIn(at: number | Date, timeZone?: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}
