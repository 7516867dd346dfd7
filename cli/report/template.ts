// The review page (docs/review.md): one HTML string, every interpolated value escaped, no external
// requests (the Content-Security-Policy allows only same-origin media, inline data images, and the
// page's one script by its hash). `reelflow report` writes it as a file; `reelflow review` serves it
// and sends the same fragments (renderGroup, renderTile, ...) as items finish.
import { createHash } from 'node:crypto';
import type { JobSpend } from '../spend';
import { formatUsd } from '../estimate';
import type { ManifestRow } from '../../storage/manifest';
import type { Pick } from '../../storage/picks';
import { escapeHtml as h, relativeUrl, svgDataUrl } from './escape';
import { aspectOf, groupTakes, modelsOf, ratioText, takeOf, varValues, type TakeGroup } from './layout';
import type { VideoMedia } from './posters';
import { PAGE_SCRIPT, PAGE_SCRIPT_HASH } from './script';
import { REPORT_CSS } from './styles';
import { END_STATES, elapsedMs, formatBytes, formatDuration, formatTime, parseTime, summarize, type ReportSummary } from './summary';

export interface ReportModel {
  job: string;
  jobFile?: string;
  generatedAt: Date;
  rows: readonly ManifestRow[];
  summary: ReportSummary;
  /** Per stored file name (`row.file`). */
  media: ReadonlyMap<string, VideoMedia>;
  ffmpeg: boolean;
  /** The standing pick of each take (storage/picks.ts currentPicks). */
  picks?: ReadonlyMap<string, Pick>;
  /** What the job spent, per model (cli/spend.ts). */
  spend?: JobSpend;
  /** Set when `reelflow review` serves the page: picks can be made, and cards arrive live. */
  live?: boolean;
  /** The review server's change count the page was made at (its event stream continues from it). */
  version?: number;
}

/** What a tile needs besides its row. */
export interface TileContext {
  media: ReadonlyMap<string, VideoMedia>;
  picks?: ReadonlyMap<string, Pick>;
  ffmpeg: boolean;
}

export const FFMPEG_NOTE = 'poster frames need ffmpeg';
/** Characters of an error message shown on a failed tile (the whole message is in its details). */
const TILE_REASON_CHARS = 140;

const STATE_LABELS: Record<string, string> = {
  succeeded: 'succeeded',
  failed: 'failed',
  timed_out: 'timed out',
  canceled: 'canceled',
  unknown: 'unknown',
};

/** The page's policy: its own script by hash; on the review server, its own event stream and picks. */
export function pagePolicy(live: boolean): string {
  return [
    "default-src 'none'",
    "img-src 'self' data:",
    "media-src 'self'",
    "style-src 'unsafe-inline'",
    `script-src '${PAGE_SCRIPT_HASH}'`,
    ...(live ? ["connect-src 'self'"] : []),
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** A neutral frame with a play mark and a one-line caption, as a data URL. */
export function placeholderPoster(caption: string): string {
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="270" viewBox="0 0 480 270">` +
    `<rect width="480" height="270" fill="#2a2f36"/>` +
    `<circle cx="240" cy="118" r="34" fill="#4a525c"/><path d="M229 100v36l30-18z" fill="#c5ccd5"/>` +
    `<text x="240" y="192" text-anchor="middle" font-family="system-ui,sans-serif" font-size="17" fill="#c5ccd5">${h(caption)}</text></svg>`;
  return svgDataUrl(svg);
}

/** A stable element id for a take (keys are any text; ids must not be). */
export function tileId(key: string): string {
  return `t-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

/** A stable element id for a group. */
export function groupId(group: string): string {
  return `g-${createHash('sha256').update(group).digest('hex').slice(0, 16)}`;
}

function fact(label: string, value: string | undefined, raw = false): string {
  if (value === undefined || value === '') return '';
  return `<dt>${h(label)}</dt><dd>${raw ? value : h(value)}</dd>`;
}

function costText(row: ManifestRow): string | undefined {
  if (typeof row.cost_usd !== 'number' || !Number.isFinite(row.cost_usd)) return undefined;
  return `${formatUsd(row.cost_usd)}${row.cost_source ? ` (${row.cost_source})` : ''}`;
}

function clip(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
}

/** The ratio a take shows: what it asked for, else its measured size. */
function ratioOf(row: ManifestRow, media: VideoMedia | undefined): string | undefined {
  if (row.ratio) return row.ratio;
  return media?.width && media.height ? ratioText(media.width, media.height) : undefined;
}

function resolutionOf(row: ManifestRow, media: VideoMedia | undefined): string | undefined {
  if (row.resolution) return row.resolution;
  return media?.width && media.height ? `${media.width}x${media.height}` : undefined;
}

/** The labels that tell a take from its neighbours: ratio, model, matrix values, take. */
function chips(row: ManifestRow, media: VideoMedia | undefined): string {
  const ratio = ratioOf(row, media);
  const vars = Object.entries(row.vars ?? {}).filter(([, value]) => typeof value === 'string' && value !== ratio);
  return [
    ratio ? `<span class="chip ratio">${h(ratio)}</span>` : '',
    `<span class="chip model">${h(row.model)}</span>`,
    ...vars.map(([name, value]) => `<span class="chip var" title="${h(name)}">${h(value)}</span>`),
  ].join('');
}

function details(row: ManifestRow, media: VideoMedia | undefined, missing: boolean): string {
  const elapsed = elapsedMs(row);
  const seconds = typeof row.seconds === 'number' ? `${row.seconds} s asked` : undefined;
  const measured = media?.durationSec !== undefined ? `${media.durationSec.toFixed(1)} s` : undefined;
  const vars = Object.entries(row.vars ?? {})
    .map(([name, value]) => `${name}=${value}`)
    .join(', ');
  const facts = [
    fact('model', `${row.model} (${row.protocol})`),
    fact('seconds', [measured, seconds].filter(Boolean).join(', ') || undefined),
    fact('ratio', ratioOf(row, media)),
    fact('resolution', resolutionOf(row, media)),
    fact('take', String(takeOf(row))),
    fact('values', vars || undefined),
    fact('seed', typeof row.seed === 'number' ? String(row.seed) : undefined),
    fact('task id', row.task_id ? `<code>${h(row.task_id)}</code>` : undefined, true),
    fact('cost', costText(row)),
    fact('file', row.file ?? undefined),
    fact('size', typeof row.bytes === 'number' ? formatBytes(row.bytes) : undefined),
    fact('finished', formatTime(parseTime(row.finished_at))),
    fact('elapsed', elapsed !== undefined ? formatDuration(elapsed) : undefined),
  ].join('');
  const reason = row.error
    ? `<p class="reason"><code>${h(row.error.kind)}</code>${h(row.error.message)}</p>`
    : row.state !== 'succeeded'
      ? '<p class="reason">no reason recorded</p>'
      : missing
        ? `<p class="reason">${h(row.file ? `${row.file} is not in the output directory` : 'no file recorded')}</p>`
        : '';
  const enhanced = row.enhanced_prompt
    ? `<span class="label">rewritten prompt</span><p class="prompt enhanced">${h(row.enhanced_prompt)}</p>`
    : '';
  return `<div class="info"><h3>#${h(row.index)} ${h(row.id ?? row.key)}</h3>${reason}<span class="label">prompt</span><p class="prompt">${h(row.prompt)}</p>${enhanced}<dl class="facts">${facts}</dl></div>`;
}

/** One take: its poster (the video loads only when played), its labels, and its details. */
export function renderTile(row: ManifestRow, ctx: TileContext): string {
  const file = row.file ?? '';
  const media = row.state === 'succeeded' ? ctx.media.get(file) : undefined;
  const src = row.state === 'succeeded' ? relativeUrl(file) : undefined;
  const exists = src !== undefined && media?.exists === true;
  const aspect = aspectOf(row, media);
  const pick = ctx.picks?.get(row.key);
  let frame: string;
  if (row.state === 'succeeded') {
    const caption = !exists ? 'video file missing' : ctx.ffmpeg ? 'no poster frame' : FFMPEG_NOTE;
    const posterUrl = media?.poster ? relativeUrl(media.poster) : undefined;
    frame = `<img alt="" loading="lazy" decoding="async" src="${h(posterUrl ?? placeholderPoster(caption))}">`;
    const seconds = media?.durationSec ?? row.seconds;
    if (typeof seconds === 'number') frame += `<span class="dur">${h(Number(seconds.toFixed(1)))} s</span>`;
  } else {
    const reason = row.error ? `${row.error.kind}: ${row.error.message}` : 'no reason recorded';
    frame = `<span class="badge ${h(row.state)}">${h(STATE_LABELS[row.state] ?? row.state)}</span><span class="why">${h(clip(reason, TILE_REASON_CHARS))}</span>`;
  }
  const attrs = [
    `class="take"`,
    `id="${tileId(row.key)}"`,
    `tabindex="-1"`,
    `data-key="${h(row.key)}"`,
    `data-state="${h(row.state)}"`,
    `data-model="${h(row.model)}"`,
    `data-vars="${h(JSON.stringify(row.vars ?? {}))}"`,
    pick ? `data-pick="${h(pick.verdict)}"` : '',
    pick?.note ? `data-note="${h(pick.note)}"` : '',
    exists ? `data-video="${h(src)}"` : '',
    `style="--ar:${aspect.toFixed(4)}"`,
  ].filter(Boolean);
  return `<article ${attrs.join(' ')}><div class="frame">${frame}<span class="tk">take ${takeOf(row)}</span><span class="mark"></span></div><div class="cap">${chips(row, media)}</div>${details(row, media, row.state === 'succeeded' && !exists)}</article>`;
}

/** One source item: its prompt once, then its takes side by side. */
export function renderGroup(group: TakeGroup, ctx: TileContext): string {
  const first = group.rows.reduce((a, b) => (b.index < a.index ? b : a));
  const title = first.id ?? first.key;
  return `<section class="group" id="${groupId(group.group)}" data-group="${h(group.group)}" data-index="${h(first.index)}"><header><b title="${h(title)}">#${h(first.index)}</b><span class="gprompt" title="${h(first.prompt)}">${h(first.prompt)}</span></header><div class="takes">${group.rows.map((r) => renderTile(r, ctx)).join('')}</div></section>`;
}

/** The counts: each end state, and the picks; a failure count links to the failures. */
export function renderStats(summary: ReportSummary, picks: ReadonlyMap<string, Pick> | undefined): string {
  const stats = END_STATES.map((state) => {
    const n = summary.counts[state];
    const inner = `<b>${n}</b><span>${h(STATE_LABELS[state])}</span>`;
    const cls = `stat ${state}${n === 0 ? ' zero' : ''}`;
    return state !== 'succeeded' && n > 0
      ? `<li class="${cls}" data-state="${state}"><a href="#failures">${inner}</a></li>`
      : `<li class="${cls}" data-state="${state}">${inner}</li>`;
  });
  const verdicts = [...(picks?.values() ?? [])];
  const kept = verdicts.filter((p) => p.verdict === 'keep').length;
  const rejected = verdicts.filter((p) => p.verdict === 'reject').length;
  stats.push(`<li class="stat kept" data-stat="kept"><b>${kept}</b><span>kept</span></li>`);
  stats.push(`<li class="stat rejected" data-stat="rejected"><b>${rejected}</b><span>rejected</span></li>`);
  stats.push(`<li class="stat" data-stat="bytes"><b>${h(formatBytes(summary.totalBytes))}</b><span>total size</span></li>`);
  stats.push(
    `<li class="stat" data-stat="wall"><b>${h(summary.wallTimeMs !== undefined ? formatDuration(summary.wallTimeMs) : '—')}</b><span>wall time</span></li>`,
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
    const meta = [row.model, row.task_id ? `task ${row.task_id}` : 'no task id'].map((v) => h(v)).join(' · ');
    return `<li class="problem" data-key="${h(row.key)}" data-state="${h(row.state)}"><a href="#${tileId(row.key)}"><span class="badge ${h(row.state)}">${h(STATE_LABELS[row.state] ?? row.state)}</span> #${h(row.index)} ${h(row.id ?? row.key)}</a> <span class="meta">${meta}</span><p class="reason">${reason}</p></li>`;
  });
  return `<h2>Did not succeed <span class="count">(${problems.length})</span></h2><ul class="problems">${items.join('')}</ul>`;
}

function option(value: string, label: string): string {
  return `<option value="${h(value)}">${h(label)}</option>`;
}

/** The filter bar: state (and pick), model, and one choice per matrix value name. */
export function renderFilters(rows: readonly ManifestRow[]): string {
  const states = ['succeeded', 'failed', 'timed_out', 'canceled', 'unknown'].map((s) => option(s, STATE_LABELS[s] ?? s));
  const picks = [option('pick:keep', 'kept'), option('pick:reject', 'rejected'), option('pick:none', 'not picked yet')];
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

function spendLine(spend: JobSpend | undefined): string {
  if (!spend) return '';
  const perModel = spend.per_model.map((m) => `${m.model} ${formatUsd(m.spent_usd)}`).join(' · ');
  const usage = spend.usage_usd > 0 ? `, ${h(formatUsd(spend.usage_usd))} from usage` : '';
  return `<p class="sub" id="spend">spent ${h(formatUsd(spend.spent_usd))} (${h(formatUsd(spend.billed_usd))} billed${usage}, ${h(formatUsd(spend.estimated_usd))} estimated)${perModel ? ` · ${h(perModel)}` : ''}</p>`;
}

function header(model: ReportModel): string {
  const { summary } = model;
  const sub = [
    `${summary.items} take${summary.items === 1 ? '' : 's'}`,
    model.jobFile ? `job file ${model.jobFile}` : undefined,
    summary.startedAt ? `from ${formatTime(summary.startedAt)} to ${formatTime(summary.finishedAt)}` : undefined,
  ]
    .filter((v): v is string => Boolean(v))
    .map((v) => h(v))
    .join(' · ');
  return `<header class="top">
<div class="title"><span class="brand">reelflow ${model.live ? 'review' : 'report'}</span><h1>${h(model.job)}</h1><p class="sub" id="sub">${sub}</p>${spendLine(model.spend)}</div>
<ul class="stats" id="stats">${renderStats(summary, model.picks)}</ul>
${model.ffmpeg ? '' : `<p class="note" id="ffmpeg-note">${h(FFMPEG_NOTE)}: install ffmpeg and run <code>reelflow report</code> again to see a frame of each video.</p>`}
<form class="filters" id="filters">${renderFilters(model.rows)}</form>
</header>`;
}

const KEYS_HELP = '← → ↑ ↓ move · space play · k keep · x reject · u clear · n note';

export function renderReport(model: ReportModel): string {
  const ctx: TileContext = { media: model.media, picks: model.picks, ffmpeg: model.ffmpeg };
  const groups = groupTakes(model.rows);
  const grid = groups.length
    ? groups.map((g) => renderGroup(g, ctx)).join('\n')
    : '<p class="empty" id="empty">No take has finished yet.</p>';
  const help = model.live ? KEYS_HELP : `${KEYS_HELP.replace(/ · k keep.*$/, '')} · picks are made in reelflow review`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${h(pagePolicy(model.live === true))}">
<meta name="referrer" content="no-referrer">
<meta name="generator" content="reelflow">
<link rel="icon" href="data:,">
<title>${h(model.job)} · reelflow ${model.live ? 'review' : 'report'}</title>
<style>${REPORT_CSS}</style>
</head>
<body data-mode="${model.live ? 'live' : 'file'}"${model.version !== undefined ? ` data-version="${model.version}"` : ''}>
${header(model)}
<div class="layout">
<main>
<section id="failures">${renderFailures(model.rows)}</section>
<section id="grid">
${grid}
</section>
</main>
<aside id="panel"><p class="keys">${h(help)}</p><div id="actions"${model.live ? '' : ' hidden'}><button type="button" data-verdict="keep">Keep (k)</button><button type="button" data-verdict="reject">Reject (x)</button><button type="button" data-verdict="clear">Clear (u)</button><button type="button" data-verdict="note">Note (n)</button><p id="status" aria-live="polite"></p></div><div id="detail"><p class="empty">Select a take to see its prompt and details.</p></div></aside>
</div>
<footer>Generated ${h(formatTime(model.generatedAt))} by reelflow. Videos and posters are read from ${model.live ? 'the job&#39;s output' : 'this directory'}; the page makes no other requests.</footer>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

/** The header figures for a set of rows (for live updates). */
export function statsFor(rows: readonly ManifestRow[], picks: ReadonlyMap<string, Pick> | undefined): string {
  const latest = new Map<string, ManifestRow>();
  for (const row of rows) latest.set(row.key, row);
  return renderStats(summarize([...latest.values()]), picks);
}
