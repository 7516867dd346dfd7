// The review page (docs/review.md): one HTML string, every interpolated value escaped, no external
// requests (the Content-Security-Policy allows only same-origin media, inline data images, and the
// page's one script by its hash). `reelflow report` writes it as a file; `reelflow review` serves it
// and sends the same fragments (renderPromptRow, renderTile, ...) as takes finish.
import type { JobSpend } from '../../client/spend';
import { formatUsd } from '../../client/estimate';
import type { ManifestRow } from '../../storage/manifest';
import type { StandingPicks } from '../../storage/picks';
import { escapeHtml as h, relativeUrl, svgDataUrl } from './escape';
import { FILMS_CSS, renderChains, renderFilms } from './films';
import type { FilmRecord } from '../../storage/films';
import { renderFailures, renderFilters, renderStats, spendLine, STATE_LABELS, subLine } from './header';
import { rowId, tileId } from './ids';
import { aspectOf, promptRows, ratioText, takeOf, type PromptRow } from './layout';
import type { VideoMedia } from './posters';
import { PAGE_SCRIPT, PAGE_SCRIPT_HASH } from './script';
import { REPORT_CSS } from './styles';
import { elapsedMs, formatBytes, formatDuration, formatTime, parseTime, type ReportSummary } from './summary';

export interface ReportModel {
  job: string;
  jobFile?: string;
  generatedAt: Date;
  /** The current render of each take (the latest row of each key). */
  rows: readonly ManifestRow[];
  /** Earlier renders that still carry a pick: a changed request rendered their take again (docs/takes.md). */
  earlier?: readonly ManifestRow[];
  summary: ReportSummary;
  /** Per stored file name (`row.file`). */
  media: ReadonlyMap<string, VideoMedia>;
  ffmpeg: boolean;
  /** The standing picks, by render (storage/picks.ts). */
  picks?: StandingPicks;
  /** When the last review ended (its last pick, ms): takes finished after it and unpicked are marked new. */
  lastReviewAt?: number;
  /** What the job spent, per model (client/spend.ts). */
  spend?: JobSpend;
  /** Set when `reelflow review` serves the page: picks can be made, and cards arrive live. */
  live?: boolean;
  /** The review server's change count the page was made at (its event stream continues from it). */
  version?: number;
  /** The job's assembled films (storage/films.ts), each shown with a player. */
  films?: readonly FilmRecord[];
  /** The job's chains of shots, each its shots' keys in order (review/report/films.ts chainsOf). */
  chains?: readonly string[][];
}

/** What a tile needs besides its row. */
export interface TileContext {
  media: ReadonlyMap<string, VideoMedia>;
  picks?: StandingPicks | undefined;
  lastReviewAt?: number | undefined;
  ffmpeg: boolean;
  /** How many more posters load at once rather than lazily (the first screenful of a page). */
  eager?: number;
}

/** Whether a take is new since the last review: finished after it, and not picked. */
export function isNew(row: ManifestRow, ctx: Pick<TileContext, 'picks' | 'lastReviewAt'>): boolean {
  if (ctx.lastReviewAt === undefined || ctx.picks?.of(row)) return false;
  const finished = Date.parse(row.finished_at);
  return !Number.isNaN(finished) && finished > ctx.lastReviewAt;
}

export const FFMPEG_NOTE = 'poster frames need ffmpeg';
/** Characters of an error message shown on a failed tile (the whole message is in its details). */
const TILE_REASON_CHARS = 140;

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

/** A label and its text, when there is one. */
function fact(label: string, value: string | undefined): Array<[string, string]> {
  return value === undefined || value === '' ? [] : [[label, value]];
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

/** What the panel shows of a take besides its row's prompt. */
export interface TakeInfo {
  reason?: string;
  enhanced?: string;
  facts: Array<[string, string]>;
}

/**
 * A take's details, as one attribute the page's script turns into text when the take is chosen:
 * a thousand takes' details as elements would be some 30,000 hidden nodes to parse at first paint.
 */
export function takeInfo(row: ManifestRow, media: VideoMedia | undefined, missing: boolean): TakeInfo {
  const elapsed = elapsedMs(row);
  const seconds = typeof row.seconds === 'number' ? `${row.seconds} s asked` : undefined;
  const measured = media?.durationSec !== undefined ? `${media.durationSec.toFixed(1)} s` : undefined;
  const vars = Object.entries(row.vars ?? {})
    .map(([name, value]) => `${name}=${value}`)
    .join(', ');
  const facts = [
    ...fact('model', `${row.model} (${row.protocol})`),
    ...fact('seconds', [measured, seconds].filter(Boolean).join(', ') || undefined),
    ...fact('ratio', ratioOf(row, media)),
    ...fact('resolution', resolutionOf(row, media)),
    ...fact('take', String(takeOf(row))),
    ...fact('values', vars || undefined),
    ...fact('seed', typeof row.seed === 'number' ? String(row.seed) : undefined),
    ...fact('task id', row.task_id ?? undefined),
    ...fact('cost', costText(row)),
    ...fact('file', row.file ?? undefined),
    ...fact('size', typeof row.bytes === 'number' ? formatBytes(row.bytes) : undefined),
    ...fact('finished', formatTime(parseTime(row.finished_at))),
    ...fact('elapsed', elapsed !== undefined ? formatDuration(elapsed) : undefined),
  ];
  const reason = row.error
    ? `${row.error.kind}: ${row.error.message}`
    : row.state !== 'succeeded'
      ? 'no reason recorded'
      : missing
        ? row.file
          ? `${row.file} is not in the output directory`
          : 'no file recorded'
        : undefined;
  return { ...(reason ? { reason } : {}), ...(row.enhanced_prompt ? { enhanced: row.enhanced_prompt } : {}), facts };
}

/** The label under a take: its number, and whether it is an earlier render or new since the last review. */
function caption(row: ManifestRow, earlier: boolean, fresh: boolean): string {
  const redo = row.redo_of ? ' <span class="chip" title="made by run --redo or --only">redo</span>' : '';
  const older = earlier
    ? ' <span class="chip earlier" title="its take was rendered again for a changed request">earlier request</span>'
    : '';
  const mark = fresh ? ' <span class="chip new">new</span>' : '';
  return `<div class="cap"><b>take ${takeOf(row)}</b>${redo}${older}${mark}</div>`;
}

/** One take: its poster (the video loads only when played), its label, and its details. */
export function renderTile(row: ManifestRow, ctx: TileContext, earlier = false): string {
  const file = row.file ?? '';
  const media = row.state === 'succeeded' ? ctx.media.get(file) : undefined;
  const src = row.state === 'succeeded' ? relativeUrl(file) : undefined;
  const exists = src !== undefined && media?.exists === true;
  const aspect = aspectOf(row, media);
  const pick = ctx.picks?.of(row);
  const fresh = !earlier && isNew(row, ctx);
  let frame: string;
  if (row.state === 'succeeded') {
    const caption = !exists ? 'video file missing' : ctx.ffmpeg ? 'no poster frame' : FFMPEG_NOTE;
    const posterUrl = media?.poster ? relativeUrl(media.poster) : undefined;
    // The first screenful loads at once (no empty frame at first paint); the rest as they scroll near.
    const lazy = ctx.eager !== undefined && ctx.eager > 0 ? ((ctx.eager -= 1), '') : ' loading="lazy"';
    frame = `<img alt=""${lazy} decoding="async" src="${h(posterUrl ?? placeholderPoster(caption))}">`;
    const seconds = media?.durationSec ?? row.seconds;
    if (typeof seconds === 'number') frame += `<span class="dur">${h(Number(seconds.toFixed(1)))} s</span>`;
  } else {
    const reason = row.error ? `${row.error.kind}: ${row.error.message}` : 'no reason recorded';
    frame = `<span class="badge ${h(row.state)}">${h(STATE_LABELS[row.state] ?? row.state)}</span><span class="why">${h(clip(reason, TILE_REASON_CHARS))}</span>`;
  }
  const attrs = [
    `class="take"`,
    `id="${tileId(row)}"`,
    `tabindex="-1"`,
    `data-key="${h(row.key)}"`,
    row.file ? `data-file="${h(row.file)}"` : '',
    `data-take="${takeOf(row)}"`,
    `data-state="${h(row.state)}"`,
    `data-model="${h(row.model)}"`,
    `data-vars="${h(JSON.stringify(row.vars ?? {}))}"`,
    earlier ? 'data-earlier="1"' : '',
    fresh ? 'data-new="1"' : '',
    pick ? `data-pick="${h(pick.verdict)}"` : '',
    pick?.note ? `data-note="${h(pick.note)}"` : '',
    exists ? `data-video="${h(src)}"` : '',
    `style="--ar:${aspect.toFixed(4)}"`,
    `data-info="${h(JSON.stringify(takeInfo(row, media, row.state === 'succeeded' && !exists)))}"`,
  ].filter(Boolean);
  return `<article ${attrs.join(' ')}><div class="frame">${frame}<span class="mark"></span></div>${caption(row, earlier, fresh)}</article>`;
}

/** The row's title: the item's id (else its index) and the matrix values that tell it from its siblings. */
function rowTitle(row: PromptRow): string {
  const first = row.takes[0]!.row;
  const name = first.id ?? `#${first.index}`;
  const values = row.values.map(([n, v]) => `<span class="chip var" title="${h(n)}">${h(v)}</span>`).join('');
  const model = `<span class="chip model">${h(first.model)}</span>`;
  return `<b class="gid" title="${h(first.key)}">${h(name)}</b>${values}${model}`;
}

/** One prompt: its id, values and prompt once, then its takes side by side in take order. */
export function renderPromptRow(row: PromptRow, ctx: TileContext): string {
  const first = row.takes[0]!.row;
  const index = row.takes.reduce((min, t) => Math.min(min, t.row.index), first.index);
  const tiles = row.takes.map((t) => renderTile(t.row, ctx, t.earlier === true)).join('');
  return `<section class="group" id="${rowId(row.prompt)}" data-prompt="${h(row.prompt)}" data-index="${h(index)}"><header>${rowTitle(row)}<span class="gprompt" title="${h(first.prompt)}">${h(first.prompt)}</span></header><div class="takes">${tiles}</div></section>`;
}

function header(model: ReportModel, fresh: number): string {
  return `<header class="top">
<div class="title"><span class="brand">reelflow ${model.live ? 'review' : 'report'}</span><h1>${h(model.job)}</h1><p class="sub" id="sub">${subLine(model.summary, model.jobFile)}</p>${spendLine(model.spend)}</div>
<ul class="stats" id="stats">${renderStats(model.summary, { shown: [...model.rows, ...(model.earlier ?? [])], picks: model.picks, fresh })}</ul>
${model.ffmpeg ? '' : `<p class="note" id="ffmpeg-note">${h(FFMPEG_NOTE)}: install ffmpeg and run <code>reelflow report</code> again to see a frame of each video.</p>`}
<form class="filters" id="filters">${renderFilters(model.rows)}</form>
</header>`;
}

/** Posters that load with the page: more than a large screen shows at once. */
const EAGER_POSTERS = 48;

const KEYS_HELP = 'click or Enter: open large · ← → ↑ ↓ move · k keep · x reject · u clear · n note on a pick';

/** The large player: one take big, its siblings a key away (review/report/script.ts fills it). */
function player(live: boolean): string {
  const actions = live
    ? '<button type="button" data-verdict="keep">Keep (k)</button><button type="button" data-verdict="reject">Reject (x)</button><button type="button" data-verdict="clear">Clear (u)</button><button type="button" data-verdict="note">Note (n)</button>'
    : '';
  return `<div id="player" hidden role="dialog" aria-modal="true" aria-labelledby="ptitle"><div class="pbox"><div class="pbar"><span id="ptitle"></span><span id="ppos"></span><span id="ppick"></span><button type="button" data-act="prev" title="previous take (←)">‹</button><button type="button" data-act="next" title="next take (→)">›</button><button type="button" data-act="close" title="close (Esc)">✕</button></div><div class="pstage" id="pstage"><p id="preason" hidden></p></div><div class="pfoot">${actions}<span class="pkeys">← → other takes of this prompt · ↑ ↓ other prompts${live ? ' · k keep · x reject · u clear · n note' : ''} · Esc close</span></div></div></div>`;
}

/** The films and chains above the grid, each on its own line; nothing for a job without them. */
function filmsAndChains(model: ReportModel): string {
  const html = renderFilms(model.films ?? []) + renderChains(model.chains ?? [], model.rows, model.media);
  return html ? `${html}\n` : '';
}

export function renderReport(model: ReportModel): string {
  const ctx: TileContext = {
    media: model.media,
    picks: model.picks,
    lastReviewAt: model.lastReviewAt,
    ffmpeg: model.ffmpeg,
    eager: EAGER_POSTERS,
  };
  const rows = promptRows(model.rows, model.earlier);
  const fresh = model.rows.filter((r) => isNew(r, ctx)).length;
  const grid = rows.length
    ? rows.map((r) => renderPromptRow(r, ctx)).join('\n')
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
<style>${REPORT_CSS}${model.films?.length || model.chains?.length ? FILMS_CSS : ''}</style>
</head>
<body data-mode="${model.live ? 'live' : 'file'}"${model.version !== undefined ? ` data-version="${model.version}"` : ''}>
${header(model, fresh)}
<div class="layout">
<main>
${filmsAndChains(model)}<section id="failures">${renderFailures(model.rows)}</section>
<section id="grid">
${grid}
</section>
</main>
<aside id="panel"><p class="keys">${h(help)}</p><div id="actions"${model.live ? '' : ' hidden'}><button type="button" data-verdict="keep">Keep (k)</button><button type="button" data-verdict="reject">Reject (x)</button><button type="button" data-verdict="clear">Clear (u)</button><button type="button" data-verdict="note">Note (n)</button><p id="status" aria-live="polite"></p></div><div id="detail"><p class="empty">Select a take to see its prompt and details.</p></div></aside>
</div>
${player(model.live === true)}
<footer>Generated ${h(formatTime(model.generatedAt))} by reelflow. Videos and posters are read from ${model.live ? 'the job&#39;s output' : 'this directory'}; the page makes no other requests.</footer>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}
