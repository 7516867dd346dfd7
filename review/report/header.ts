// The review page's header (docs/review.md): the counts (each end state, the picks, what is new
// since the last review), what the job spent, the filters, and the list of takes that did not
// succeed. `reelflow review` sends the same fragments again as takes finish.
import { createChargeText, unsuccessfulParts, type JobSpend } from '../../client/spend';
import { formatUsd } from '../../client/estimate';
import type { ManifestRow } from '../../storage/manifest/row';
import type { StandingPicks } from '../../storage/records/picks';
import { escapeHtml as h } from './escape';
import { modelsOf, varValues } from './layout';
import { END_STATES } from '../../domain/end-states';
import { formatBytes, formatDuration, formatTime, summarize, type ReportSummary } from './summary';
import { tileId } from './ids';

export const STATE_LABELS: Record<string, string> = {
  succeeded: 'succeeded',
  failed: 'failed',
  timed_out: 'timed out',
  canceled: 'canceled',
  unknown: 'unknown',
  blocked: 'blocked',
};

/** What the counts need besides the rows. */
export interface StatsInput {
  /** The renders shown (the current ones, and earlier ones that carry a pick). */
  shown: readonly ManifestRow[];
  picks?: StandingPicks | undefined;
  /** How many takes are new since the last review. */
  fresh: number;
}

/** The counts: each end state, the picks and the new takes; a failure count links to the failures. */
export function renderStats(summary: ReportSummary, input: StatsInput): string {
  // `blocked` only where a chain left some (docs/chains.md): other jobs' counts stay as they were.
  const states = END_STATES.filter((state) => state !== 'blocked' || summary.counts.blocked > 0);
  const stats = states.map((state) => {
    const n = summary.counts[state];
    const inner = `<b>${n}</b><span>${h(STATE_LABELS[state])}</span>`;
    const cls = `stat ${state}${n === 0 ? ' zero' : ''}`;
    return state !== 'succeeded' && n > 0
      ? `<li class="${cls}" data-state="${state}"><a href="#failures">${inner}</a></li>`
      : `<li class="${cls}" data-state="${state}">${inner}</li>`;
  });
  const verdicts = input.shown.map((row) => input.picks?.of(row)?.verdict);
  const kept = verdicts.filter((v) => v === 'keep').length;
  const rejected = verdicts.filter((v) => v === 'reject').length;
  // Picks first after the states: on a phone the row scrolls, and these are what a reviewer watches.
  stats.splice(1, 0, `<li class="stat kept" data-stat="kept"><b>${kept}</b><span>kept</span></li>`);
  stats.splice(2, 0, `<li class="stat rejected" data-stat="rejected"><b>${rejected}</b><span>rejected</span></li>`);
  stats.splice(3, 0, `<li class="stat new${input.fresh === 0 ? ' zero' : ''}" data-stat="new"><b>${input.fresh}</b><span>new</span></li>`);
  stats.push(`<li class="stat extra" data-stat="bytes"><b>${h(formatBytes(summary.totalBytes))}</b><span>total size</span></li>`);
  stats.push(
    `<li class="stat extra" data-stat="wall"><b>${h(summary.wallTimeMs !== undefined ? formatDuration(summary.wallTimeMs) : '—')}</b><span>wall time</span></li>`,
  );
  return stats.join('');
}

/** Every take that did not succeed, with its reason, each linking to its tile. */
export function renderFailures(rows: readonly ManifestRow[]): string {
  const latest = new Map<string, ManifestRow>();
  for (const row of rows) latest.set(row.key, row);
  const problems = [...latest.values()].filter((r) => r.state !== 'succeeded').sort((a, b) => a.index - b.index);
  if (problems.length === 0) return '';
  const items = problems.map((row) => {
    const reason = row.error ? `<code>${h(row.error.kind)}</code>${h(row.error.message)}` : 'no reason recorded';
    const charge = createChargeText(row);
    const meta = [row.model, row.task_id ? `task ${row.task_id}` : 'no task id', ...(charge ? [charge] : [])].map((v) => h(v)).join(' · ');
    return `<li class="problem" data-key="${h(row.key)}" data-state="${h(row.state)}"><a href="#${tileId(row)}"><span class="badge ${h(row.state)}">${h(STATE_LABELS[row.state] ?? row.state)}</span> #${h(row.index)} ${h(row.id ?? row.key)}</a> <span class="meta">${meta}</span><p class="reason">${reason}</p></li>`;
  });
  // The list scrolls inside a few lines; the heading says how many there are, so a scrolled list is never taken for all of them.
  const more = problems.length > 3 ? ` <span class="more">scroll for all ${problems.length}</span>` : '';
  return `<h2>Did not succeed <span class="count">(${problems.length})</span>${more}</h2><ul class="problems" tabindex="0">${items.join('')}</ul>`;
}

function option(value: string, label: string): string {
  return `<option value="${h(value)}">${h(label)}</option>`;
}

/** The filter bar: state (and pick, and new), model, and one choice per matrix value name. */
export function renderFilters(rows: readonly ManifestRow[]): string {
  const ended = new Set(rows.map((r) => r.state));
  const states = END_STATES.filter((s) => s !== 'blocked' || ended.has(s)).map((s) => option(s, STATE_LABELS[s] ?? s));
  const picks = [
    option('pick:keep', 'kept'),
    option('pick:reject', 'rejected'),
    option('pick:none', 'not picked yet'),
    option('new', 'new since last review'),
  ];
  const models = modelsOf(rows).map((m) => option(m, m));
  const vars = [...varValues(rows).entries()].map(
    ([name, values]) =>
      `<label>${h(name)} <select data-filter="var" data-name="${h(name)}">${option('', 'all')}${values.map((v) => option(v, v)).join('')}</select></label>`,
  );
  return [
    `<label>show <select data-filter="state">${option('', 'all')}${states.join('')}${picks.join('')}</select></label>`,
    `<label>model <select data-filter="model">${option('', 'all')}${models.join('')}</select></label>`,
    ...vars,
    '<span id="shown" aria-live="polite"></span>',
  ].join('');
}

export function spendLine(spend: JobSpend | undefined): string {
  if (!spend) return '';
  const perModel = spend.per_model.map((m) => `${m.model} ${formatUsd(m.spent_usd)}`).join(' · ');
  const usage = spend.usage_usd > 0 ? `, ${h(formatUsd(spend.usage_usd))} from usage` : '';
  // The renders that did not succeed are spend as the budget counts it; the header says which the gateway charged.
  const u = spend.unsuccessful;
  const failed = u ? ` · ${h(`${u.renders} did not succeed: ${unsuccessfulParts(u)}`)}` : '';
  return `<p class="sub" id="spend">spent ${h(formatUsd(spend.spent_usd))} (${h(formatUsd(spend.billed_usd))} billed${usage}, ${h(formatUsd(spend.estimated_usd))} estimated)${perModel ? ` · ${h(perModel)}` : ''}${failed}</p>`;
}

/** The line under the job's name: how many takes, from which file, over what time. */
export function subLine(summary: ReportSummary, jobFile: string | undefined): string {
  return [
    `${summary.items} take${summary.items === 1 ? '' : 's'}`,
    jobFile ? `job file ${jobFile}` : undefined,
    summary.startedAt ? `from ${formatTime(summary.startedAt)} to ${formatTime(summary.finishedAt)}` : undefined,
  ]
    .filter((v): v is string => Boolean(v))
    .map((v) => h(v))
    .join(' · ');
}

/** The header figures for a set of rows (for live updates). */
export function statsFor(rows: readonly ManifestRow[], input: StatsInput): string {
  const latest = new Map<string, ManifestRow>();
  for (const row of rows) latest.set(row.key, row);
  return renderStats(summarize([...latest.values()]), input);
}
