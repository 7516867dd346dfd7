// The page itself: one HTML string, every interpolated value escaped, no external requests
// (enforced by the Content-Security-Policy: only same-directory media and inline data images).
import type { ManifestRow } from '../../storage/manifest';
import { escapeHtml as h, relativeUrl, svgDataUrl } from './escape';
import type { VideoMedia } from './posters';
import { REPORT_CSS } from './styles';
import { END_STATES, elapsedMs, formatBytes, formatDuration, formatTime, parseTime, type ReportSummary } from './summary';

export interface ReportModel {
  job: string;
  jobFile?: string;
  generatedAt: Date;
  rows: readonly ManifestRow[];
  summary: ReportSummary;
  /** Per stored file name (`row.file`). */
  media: ReadonlyMap<string, VideoMedia>;
  ffmpeg: boolean;
}

export const FFMPEG_NOTE = 'poster frames need ffmpeg';

const STATE_LABELS: Record<string, string> = {
  succeeded: 'succeeded',
  failed: 'failed',
  timed_out: 'timed out',
  canceled: 'canceled',
  unknown: 'unknown',
};

const CSP = "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/** A neutral 16:9 frame with a play mark and a one-line caption, as a data URL. */
export function placeholderPoster(caption: string): string {
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="270" viewBox="0 0 480 270">` +
    `<rect width="480" height="270" fill="#e9ecf0"/>` +
    `<circle cx="240" cy="118" r="34" fill="#c5ccd5"/><path d="M229 100v36l30-18z" fill="#f5f6f8"/>` +
    `<text x="240" y="192" text-anchor="middle" font-family="system-ui,sans-serif" font-size="17" fill="#5b6470">${h(caption)}</text></svg>`;
  return svgDataUrl(svg);
}

function fact(label: string, value: string | undefined, raw = false): string {
  if (value === undefined || value === '') return '';
  return `<dt>${h(label)}</dt><dd>${raw ? value : h(value)}</dd>`;
}

function shortSha(sha: string | null): string | undefined {
  if (!sha) return undefined;
  return `<code title="${h(sha)}">${h(sha.slice(0, 12))}${sha.length > 12 ? '…' : ''}</code>`;
}

function rowTitle(row: ManifestRow): string {
  return row.id ?? row.file ?? row.key;
}

function videoCard(row: ManifestRow, model: ReportModel): string {
  const file = row.file ?? '';
  const media = model.media.get(file);
  const src = relativeUrl(file);
  const exists = src !== undefined && media?.exists === true;
  const posterCaption = !exists ? 'video file missing' : model.ffmpeg ? 'no poster frame' : FFMPEG_NOTE;
  const posterUrl = media?.poster ? relativeUrl(media.poster) : undefined;
  const poster = posterUrl ?? placeholderPoster(posterCaption);
  const player = exists
    ? `<video controls preload="metadata" playsinline poster="${h(poster)}" src="${h(src)}"></video>`
    : `<img class="placeholder" alt="${h(posterCaption)}" src="${h(poster)}">`;
  const elapsed = elapsedMs(row);
  const facts = [
    fact('file', file || undefined),
    fact('model', row.model),
    fact('protocol', row.protocol),
    fact('duration', media?.durationSec !== undefined ? `${media.durationSec.toFixed(1)} s` : undefined),
    fact('size', typeof row.bytes === 'number' ? formatBytes(row.bytes) : undefined),
    fact('created', row.created_at ? formatTime(parseTime(row.created_at)) : undefined),
    fact('finished', formatTime(parseTime(row.finished_at))),
    fact('elapsed', elapsed !== undefined ? formatDuration(elapsed) : undefined),
    fact('polls', String(row.polls)),
    fact('base', row.base_url ?? undefined, false),
    fact('task id', row.task_id ? `<code>${h(row.task_id)}</code>` : undefined, true),
    fact('sha256', shortSha(row.sha256), true),
  ].join('');
  const enhanced = row.enhanced_prompt
    ? `<div><span class="label">enhanced prompt</span><p class="prompt enhanced">${h(row.enhanced_prompt)}</p></div>`
    : '';
  return `<article class="card" data-key="${h(row.key)}">
${player}
<div class="body">
<h3><span class="idx">#${h(row.index)}</span>${exists ? `<a href="${h(src)}">${h(rowTitle(row))}</a>` : `<span>${h(rowTitle(row))}</span>`}</h3>
${exists ? '' : `<p class="missing">${h(file ? `${file} is not in the output directory` : 'no file recorded')}</p>`}
<div><span class="label">prompt</span><p class="prompt">${h(row.prompt)}</p></div>
${enhanced}
<dl class="facts">${facts}</dl>
</div>
</article>`;
}

function problemItem(row: ManifestRow): string {
  const finished = formatTime(parseTime(row.finished_at));
  const meta = [row.model, row.protocol, row.task_id ? `task ${row.task_id}` : 'no task id', row.base_url ?? undefined, finished]
    .filter((v): v is string => Boolean(v))
    .map((v) => h(v))
    .join(' · ');
  const reason = row.error ? `<code>${h(row.error.kind)}</code>${h(row.error.message)}` : '<span class="meta">no reason recorded</span>';
  return `<li class="problem" data-key="${h(row.key)}" data-state="${h(row.state)}">
<div class="head"><span class="badge ${h(row.state)}">${h(STATE_LABELS[row.state] ?? row.state)}</span><span class="idx">#${h(row.index)} ${h(rowTitle(row))}</span><span class="meta">${meta}</span></div>
<p class="reason">${reason}</p>
<p class="prompt"><span class="label">prompt</span>${h(row.prompt)}</p>
</li>`;
}

function header(model: ReportModel): string {
  const { summary } = model;
  const stats = END_STATES.map((state) => {
    const n = summary.counts[state];
    return `<li class="stat ${state}${n === 0 ? ' zero' : ''}" data-state="${state}"><b>${n}</b><span>${h(STATE_LABELS[state])}</span></li>`;
  });
  stats.push(`<li class="stat" data-stat="bytes"><b>${h(formatBytes(summary.totalBytes))}</b><span>total size</span></li>`);
  stats.push(
    `<li class="stat" data-stat="wall"><b>${h(summary.wallTimeMs !== undefined ? formatDuration(summary.wallTimeMs) : '—')}</b><span>wall time</span></li>`,
  );
  const sub = [
    `${summary.items} item${summary.items === 1 ? '' : 's'}`,
    model.jobFile ? `job file ${model.jobFile}` : undefined,
    summary.startedAt ? `from ${formatTime(summary.startedAt)} to ${formatTime(summary.finishedAt)}` : undefined,
  ]
    .filter((v): v is string => Boolean(v))
    .map((v) => h(v))
    .join(' · ');
  return `<header class="top"><div class="wrap">
<span class="brand">reelflow report</span>
<h1>${h(model.job)}</h1>
<p class="sub">${sub}</p>
<ul class="stats">${stats.join('')}</ul>
${model.ffmpeg ? '' : `<p class="note" id="ffmpeg-note">${h(FFMPEG_NOTE)}: install ffmpeg and run <code>reelflow report</code> again to see a frame of each video.</p>`}
</div></header>`;
}

export function renderReport(model: ReportModel): string {
  const byIndex = [...model.rows].sort((a, b) => a.index - b.index);
  const succeeded = byIndex.filter((r) => r.state === 'succeeded');
  const problems = byIndex.filter((r) => r.state !== 'succeeded');
  const videos = succeeded.length
    ? `<div class="grid">${succeeded.map((r) => videoCard(r, model)).join('\n')}</div>`
    : '<p class="empty">No video succeeded.</p>';
  const problemList = problems.length
    ? `<ul class="problems">${problems.map(problemItem).join('\n')}</ul>`
    : '<p class="empty">None: every item succeeded.</p>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${h(CSP)}">
<meta name="generator" content="reelflow">
<link rel="icon" href="data:,">
<title>${h(model.job)} · reelflow report</title>
<style>${REPORT_CSS}</style>
</head>
<body>
${header(model)}
<main class="wrap">
<section id="videos"><h2>Videos <span class="count">(${succeeded.length})</span></h2>
${videos}
</section>
<section id="failures"><h2>Failed, timed out, canceled and unknown <span class="count">(${problems.length})</span></h2>
${problemList}
</section>
</main>
<footer class="wrap">Generated ${h(formatTime(model.generatedAt))} by reelflow. Videos and posters are read from this directory; the page makes no other requests.</footer>
</body>
</html>
`;
}
