// report.html without a browser: escaping, summary figures, and the page without ffmpeg.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ManifestRow } from '../../../storage/manifest/row';
import { writeReport } from '../../../review/report';
import { escapeHtml, relativeUrl } from '../../../review/report/escape';
import { insideDir, posterName } from '../../../review/report/posters';
import { mapLimit } from '../../../storage/objects/map-limit';
import { formatBytes, formatDuration, summarize } from '../../../review/report/summary';
import { PAGE_SCRIPT, PAGE_SCRIPT_HASH } from '../../../review/report/script';
import { FFMPEG_NOTE, renderReport } from '../../../review/report/template';
import { StandingPicks } from '../../../storage/records/picks';
import { manifestRow } from '../../support/storage';

const row = (index: number, fields: Partial<ManifestRow> = {}): ManifestRow =>
  manifestRow(index, {
    model: 'm',
    prompt: `p${index}`,
    created_at: '2025-01-01T00:00:00Z',
    finished_at: '2025-01-01T00:01:00Z',
    polls: 2,
    file: `${index}.mp4`,
    bytes: 1000,
    sha256: 'f'.repeat(64),
    ...fields,
  });

function page(rows: ManifestRow[], ffmpeg = true): string {
  return renderReport({
    job: 'job',
    generatedAt: new Date('2025-01-02T00:00:00Z'),
    rows,
    summary: summarize(rows),
    ffmpeg,
    media: new Map(rows.map((r) => [r.file ?? '', { exists: true, poster: `posters/${r.file}.jpg` }])),
  });
}

void describe('escaping', () => {
  void it('escapes markup, quotes and ampersands', () => {
    assert.equal(escapeHtml(`<script>alert("x") & 'y'</script>`), '&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;');
    assert.equal(escapeHtml(null), '');
    assert.equal(escapeHtml(42), '42');
  });

  void it('renders a <script> prompt as text, never as an element', () => {
    const html = page([
      row(1, { prompt: '<script>alert(1)</script>', enhanced_prompt: '<img src=x onerror=alert(2)>' }),
      row(2, { state: 'failed', file: null, error: { kind: '<k>', message: '"><script>alert(3)</script>' } }),
    ]);
    assert.equal((html.match(/<script/gi) ?? []).length, 1, 'one script element: the page s own');
    assert.ok(html.includes(`<script>${PAGE_SCRIPT}</script>`));
    assert.ok(html.includes(PAGE_SCRIPT_HASH), 'the policy allows that script by its hash, and no other');
    assert.ok(!html.includes('<img src=x'), 'no injected element');
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    assert.ok(html.includes('&lt;img src=x onerror=alert(2)&gt;'));
    assert.ok(html.includes('&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;'));
    assert.ok(html.includes('<code>&lt;k&gt;</code>'));
  });

  void it('builds relative URLs that stay in the output directory', () => {
    assert.equal(relativeUrl('001 hero #1?.mp4'), '001%20hero%20%231%3F.mp4');
    assert.equal(relativeUrl('clips/a b.mp4'), 'clips/a%20b.mp4');
    assert.equal(relativeUrl('javascript:alert(1)'), 'javascript%3Aalert(1)');
    assert.equal(relativeUrl('../secret.mp4'), undefined);
    assert.equal(relativeUrl('/etc/passwd'), undefined);
    assert.equal(insideDir('/out', '../x'), undefined);
    assert.equal(insideDir('/out', 'a/../../x'), undefined);
    assert.equal(insideDir('/out', 'a/b.mp4'), '/out/a/b.mp4');
    assert.equal(posterName('a/b.mp4'), 'posters/a/b.mp4.jpg');
  });
});

void describe('summary', () => {
  void it('counts every end state, bytes and wall time', () => {
    const s = summarize([
      row(1, { created_at: '2025-01-01T00:00:10Z', finished_at: '2025-01-01T00:02:00Z' }),
      row(2, { created_at: '2025-01-01T00:00:00Z', finished_at: '2025-01-01T00:01:00Z', bytes: 500 }),
      row(3, { state: 'failed', bytes: null, created_at: null, finished_at: '2025-01-01T00:03:00Z' }),
      row(4, { state: 'unknown', bytes: null }),
      row(5, { state: 'blocked', bytes: null, created_at: null, blocked_by: 'k3' }),
    ]);
    assert.deepEqual(s.counts, { succeeded: 2, failed: 1, timed_out: 0, canceled: 0, unknown: 1, blocked: 1 });
    assert.equal(s.totalBytes, 1500);
    assert.equal(s.wallTimeMs, 180_000);
    assert.equal(s.items, 5);
  });

  void it('formats sizes and durations', () => {
    assert.equal(formatBytes(512), '512 B');
    assert.equal(formatBytes(1536), '1.5 KB');
    assert.equal(formatBytes(250 * 1024 * 1024), '250 MB');
    assert.equal(formatDuration(850), '850 ms');
    assert.equal(formatDuration(4200), '4.2 s');
    assert.equal(formatDuration(185_000), '3 m 05 s');
    assert.equal(formatDuration(7_620_000), '2 h 07 m');
  });

  void it('runs at most `limit` tasks at once, in order', async () => {
    let running = 0;
    let peak = 0;
    const out = await mapLimit([1, 2, 3, 4, 5], 2, async (n) => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 5));
      running -= 1;
      return n * 10;
    });
    assert.deepEqual(out, [10, 20, 30, 40, 50]);
    assert.equal(peak, 2);
  });
});

void describe('writeReport without ffmpeg', () => {
  void it('shows placeholders and the note, and still lists everything', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'reelflow-report-unit-'));
    try {
      await writeFile(join(dir, '1.mp4'), 'not really a video');
      const rows = [
        row(1),
        row(2, { file: 'gone.mp4' }),
        row(3, { state: 'canceled', file: null, error: { kind: 'canceled', message: 'by user' } }),
      ];
      const result = await writeReport({ job: 'j', rows, outputDir: dir, tools: { ffmpeg: null, ffprobe: null } });
      assert.deepEqual(result, { path: join(dir, 'report.html'), posters: 0, ffmpeg: false });
      const html = await readFile(result.path, 'utf8');
      assert.ok(html.includes(FFMPEG_NOTE));
      assert.match(html, /<img alt=""(?: loading="lazy")? decoding="async" src="data:image\/svg\+xml;charset=utf-8,[^"]+">/);
      assert.match(html, /data-key="k1"[^>]*data-video="1.mp4"/, 'the video is named for the player, not loaded');
      assert.ok(html.includes('gone.mp4 is not in the output directory'), 'a missing file is said, not linked');
      assert.equal((html.match(/data-video=/g) ?? []).length, 1);
      assert.equal((html.match(/<video/g) ?? []).length, 0, 'no video element until one is played');
      assert.ok(html.includes('by user'));
      assert.ok(!html.includes('http-equiv="refresh"') && !/\b(src|href)="https?:/.test(html), 'no external URLs');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it('shows the picks read-only: marked tiles, no pick buttons', () => {
    const rows = [row(1), row(2)];
    const html = renderReport({
      job: 'job',
      generatedAt: new Date('2025-01-02T00:00:00Z'),
      rows,
      summary: summarize(rows),
      ffmpeg: true,
      media: new Map(),
      picks: StandingPicks.of([{ key: 'k2', verdict: 'reject', note: 'too <dark>', at: '2025-01-02T00:00:00Z' }], rows),
    });
    assert.match(html, /data-key="k2"[^>]*data-pick="reject" data-note="too &lt;dark&gt;"/);
    assert.match(html, /<div id="actions" hidden>/);
    assert.match(html, /<body data-mode="file">/);
    assert.ok(!html.includes('connect-src'), 'the file makes no requests of its own');
  });

  void it('leaves out the note when ffmpeg is there', () => {
    assert.ok(!page([row(1)], true).includes(FFMPEG_NOTE));
  });
});
