// Which shot waits on which and which are blocked and why (docs/chains.md), in lines of bounded
// length for the live display, `status` and `results`: a chain of 500 shots is one line each, not
// 500 (`waiting: shot-4 (on shot-3), shot-5 (on shot-4), … and 495 more`).
import type { PlanItem } from '../jobfile/plan';
import type { ManifestRow } from '../storage/manifest/row';
import type { JobProgress } from '../workflows/types';
import { displayWidth, fitWidth, plainText } from '../client/terminal-text';

/**
 * `label: a, b, … and N more` within `width` columns: as many entries as fit, in order; `total`
 * counts every entry (more than `entries` holds when the caller has only the latest ones).
 */
export function boundedList(label: string, entries: readonly string[], total: number, width: number): string | undefined {
  if (total === 0) return undefined;
  const clean = entries.map(plainText);
  const head = `${label}: `;
  const lineWith = (shown: number) => {
    const rest = total - shown;
    return `${head}${clean.slice(0, shown).join(', ')}${rest > 0 ? `, … and ${rest} more` : ''}`;
  };
  // Entries are added while the line fits; the prefix only grows, so the first that does not fit ends it.
  let best: string | undefined;
  for (let shown = 1; shown <= clean.length; shown++) {
    const line = lineWith(shown);
    if (displayWidth(line) > width) break;
    best = line;
  }
  return best ?? fitWidth(lineWith(Math.min(1, clean.length)), width);
}

/** The live display's lines: the shots that wait and on what, the blocked ones and why; none for a job without chains. */
export function chainLines(p: Pick<JobProgress, 'waiting' | 'blocked' | 'counts'>, width: number): string[] {
  const waiting = p.waiting ?? [];
  const blocked = [...(p.blocked ?? [])].reverse();
  return [
    boundedList(
      'waiting',
      waiting.map((w) => `${w.key} (on ${w.waitsOn})`),
      waiting.length,
      width,
    ),
    boundedList(
      'blocked',
      blocked.map((b) => `${b.key} (${b.why})`),
      Math.max(p.counts.blocked ?? 0, blocked.length),
      width,
    ),
  ].filter((line): line is string => line !== undefined);
}

/**
 * The plan's items without a row that wait on others, each with the first need that has not
 * succeeded (`results` of a job that is running, or stopped before its chain went on).
 */
export function waitingFromRows(
  items: ReadonlyArray<Pick<PlanItem, 'key' | 'needs'>>,
  latest: ReadonlyMap<string, Pick<ManifestRow, 'state'>>,
): Array<{ key: string; waitsOn: string }> {
  const out: Array<{ key: string; waitsOn: string }> = [];
  for (const item of items) {
    if (latest.has(item.key)) continue;
    const need = item.needs?.find((n) => latest.get(n.key)?.state !== 'succeeded');
    if (need) out.push({ key: item.key, waitsOn: need.key });
  }
  return out;
}
