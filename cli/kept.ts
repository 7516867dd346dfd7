// `results --kept` printed: the kept takes' and films' paths (client/takes-view.ts finds them).
import type { KeptFilm } from '../client/takes-view';

/**
 * `results --kept`: one path per line (table, csv), the films' after the takes', so a pipe gets
 * every kept file; each film described on stderr (its clips, length, sha256). JSON: the list of
 * {key, path}, then one entry per film with its fields.
 */
export function printKept(kept: ReadonlyArray<{ key: string; path: string }>, format: string, films: readonly KeptFilm[] = []): void {
  if (format === 'json') {
    process.stdout.write(`${JSON.stringify([...kept, ...films], null, 2)}\n`);
    return;
  }
  process.stdout.write([...kept, ...films].map((k) => `${k.path}\n`).join(''));
  for (const f of films) {
    process.stderr.write(`film ${f.film}: ${f.clips.join(' -> ')}, ${f.duration_sec.toFixed(1)} s, sha256 ${f.sha256}, ${f.path}\n`);
  }
}
