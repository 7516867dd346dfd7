// The films and chains of the review page (docs/chains.md, "Assembly"; docs/review.md): each
// assembled film with a player and what it was cut from, and each chain of shots as a strip of its
// shots in order, the takes of each shot under it. Every value is escaped; media come from the
// page's own origin (its Content-Security-Policy).
import type { PlanItem } from '../../jobfile/plan';
import { baseKeyOf, takeOfKey } from '../../jobfile/takes';
import type { FilmRecord } from '../../storage/records/films';
import type { ManifestRow } from '../../storage/manifest/row';
import { escapeHtml as h, relativeUrl } from './escape';
import type { VideoMedia } from './posters';
import { formatBytes } from './summary';

export const FILMS_CSS = `
.films, .chains { margin: 12px 16px; }
.films > h2, .chains > h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 0 0 6px; }
.film { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 10px; margin-bottom: 10px; display: flex; flex-wrap: wrap; gap: 10px 16px; }
.film video { width: min(560px, 100%); aspect-ratio: 16 / 9; background: #000; border-radius: 6px; }
.film dl { margin: 0; display: grid; grid-template-columns: auto 1fr; gap: 2px 10px; font-size: 12.5px; align-content: start; min-width: 0; }
.film dt { color: var(--muted); } .film dd { margin: 0; overflow-wrap: anywhere; }
.film h3 { margin: 0; font-size: 16px; flex-basis: 100%; }
.strip { display: flex; gap: 8px; overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 8px; margin: 0 0 10px; list-style: none; }
.shot { flex: 0 0 auto; display: flex; flex-direction: column; gap: 4px; align-items: stretch; }
.shot > b { font-size: 12.5px; } .shot > b::before { content: attr(data-n) ". "; color: var(--muted); font-weight: 400; }
.shot + .shot { border-left: 2px dashed var(--line); padding-left: 8px; }
.stake { display: flex; gap: 6px; align-items: center; font-size: 11.5px; color: var(--ink); text-decoration: none; }
.stake img { height: 54px; aspect-ratio: 16 / 9; object-fit: cover; border-radius: 4px; background: #2a2f36; }
.stake .st { color: var(--muted); } .stake.failed .st, .stake.timed_out .st, .stake.unknown .st, .stake.blocked .st { color: var(--bad); }
`;

/**
 * The chains of a plan: items joined by what they need of each other, each as its shots' keys in
 * plan order (the plan lists an item after the items it needs). Takes of one shot are one shot;
 * an item that needs nothing and is needed by nothing is no chain.
 */
export function chainsOf(items: ReadonlyArray<Pick<PlanItem, 'key' | 'needs'>>): string[][] {
  const parent = new Map<string, string>();
  const find = (key: string): string => {
    let root = key;
    while (parent.get(root) !== undefined && parent.get(root) !== root) root = parent.get(root)!;
    parent.set(key, root);
    return root;
  };
  const shots: string[] = [];
  for (const item of items) {
    const shot = baseKeyOf(item.key);
    if (!parent.has(shot)) {
      parent.set(shot, shot);
      shots.push(shot);
    }
  }
  const linked = new Set<string>();
  for (const item of items) {
    for (const need of item.needs ?? []) {
      if (!parent.has(baseKeyOf(need.key))) continue;
      const [a, b] = [find(baseKeyOf(item.key)), find(baseKeyOf(need.key))];
      linked.add(baseKeyOf(item.key)).add(baseKeyOf(need.key));
      if (a !== b) parent.set(a, b);
    }
  }
  const chains = new Map<string, string[]>();
  for (const shot of shots) {
    if (!linked.has(shot)) continue;
    const root = find(shot);
    chains.set(root, [...(chains.get(root) ?? []), shot]);
  }
  return [...chains.values()];
}

function seconds(value: number): string {
  return `${value.toFixed(1)} s`;
}

/** One film: its player, and its clips, length, size, sha256 and how it was cut. */
function renderFilm(film: FilmRecord): string {
  const src = relativeUrl(film.file);
  const player = src ? `<video controls preload="metadata" src="${h(src)}"></video>` : '';
  const facts: Array<[string, string]> = [
    ['clips', film.clips.map((c) => c.key).join(' → ')],
    ['length', seconds(film.duration_sec)],
    ['crossfade', film.crossfade_sec > 0 ? seconds(film.crossfade_sec) : 'none'],
    ['cut by', film.method === 'stream_copy' ? 'stream copy' : 're-encode'],
    ['file', film.file],
    ['size', formatBytes(film.bytes)],
    ['sha256', film.sha256],
    ['made', film.made_at],
  ];
  const dl = facts.map(([k, v]) => `<dt>${h(k)}</dt><dd>${h(v)}</dd>`).join('');
  return `<article class="film" id="film-${h(encodeURIComponent(film.name))}" data-film="${h(film.name)}"><h3>${h(film.name)}</h3>${player}<dl>${dl}</dl></article>`;
}

export function renderFilms(films: readonly FilmRecord[]): string {
  if (films.length === 0) return '';
  return `<section class="films" id="films"><h2>Films</h2>${films.map(renderFilm).join('')}</section>`;
}

/** One take under its shot: its poster (a link that plays it), its take number and state. */
function renderShotTake(row: ManifestRow, media: ReadonlyMap<string, VideoMedia>): string {
  const take = row.take ?? takeOfKey(row.key);
  const m = row.file ? media.get(row.file) : undefined;
  const poster = m?.poster ? relativeUrl(m.poster) : undefined;
  const src = row.state === 'succeeded' && row.file && m?.exists !== false ? relativeUrl(row.file) : undefined;
  const img = `<img alt="" loading="lazy"${poster ? ` src="${h(poster)}"` : ''}>`;
  // A blocked take names the shot it waits for; its reason is the tooltip (docs/chains.md).
  const state = row.state === 'blocked' && row.blocked_by ? `blocked on ${row.blocked_by}` : row.state;
  const label = `take ${take} <span class="st">${h(state)}</span>`;
  const why = row.state !== 'succeeded' && row.error ? ` title="${h(row.error.message)}"` : '';
  const attrs = `class="stake ${h(row.state)}" data-key="${h(row.key)}"${why}`;
  return src ? `<a ${attrs} href="${h(src)}">${img}${label}</a>` : `<span ${attrs}>${img}${label}</span>`;
}

/** Each chain as a strip: its shots in order, the takes of each under it (take order). */
export function renderChains(chains: readonly string[][], rows: readonly ManifestRow[], media: ReadonlyMap<string, VideoMedia>): string {
  if (chains.length === 0) return '';
  const takes = new Map<string, ManifestRow[]>();
  for (const row of rows) takes.set(baseKeyOf(row.key), [...(takes.get(baseKeyOf(row.key)) ?? []), row]);
  const strips = chains.map((shots, i) => {
    const cells = shots.map((shot, n) => {
      const own = (takes.get(shot) ?? []).sort((a, b) => (a.take ?? takeOfKey(a.key)) - (b.take ?? takeOfKey(b.key)));
      const name = own[0]?.id ?? shot;
      const under = own.length
        ? own.map((row) => renderShotTake(row, media)).join('')
        : '<span class="stake"><span class="st">not rendered yet</span></span>';
      return `<li class="shot" data-shot="${h(shot)}"><b data-n="${n + 1}">${h(name)}</b>${under}</li>`;
    });
    return `<ol class="strip" data-chain="${i + 1}">${cells.join('')}</ol>`;
  });
  return `<section class="chains" id="chains"><h2>Chains</h2>${strips.join('')}</section>`;
}
