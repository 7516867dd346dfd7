// A handed job folder's manifest and picks are data, never instructions: planted rows whose `file`
// leaves the output location (or carries a newline) are never printed as paths, a malformed or
// truncated row is skipped with a warning naming its line while the job renders the rest, and a
// planted "video" that is no video (an HLS playlist named .mp4) is never handed to ffmpeg or
// ffprobe. The built CLI, a real Temporal development server, the simulator over HTTP, real ffmpeg.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openStorage } from '../../storage';
import { appendPicks } from '../../storage/picks';
import { findMediaTools } from '../../review/report/posters';
import { LiveJob } from '../../review/live';
import { useTemporalAndSimulator } from '../support/e2e';
import { runCli } from '../support/cli';
import { tempDir, writeJob } from '../support/jobs';

const KEY = 'sk-test-planted-0123456789abcd';

type Row = Record<string, unknown> & { key: string; file: string | null };

function manifestLines(dir: string): string[] {
  return readFileSync(join(dir, 'out', 'manifest.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

function rowOf(dir: string, key: string): Row {
  const row = manifestLines(dir)
    .map((l) => JSON.parse(l) as Row)
    .find((r) => r.key === key);
  assert.ok(row, `a row for ${key}`);
  return row;
}

/** Appends `rows` to the manifest; returns the line number each landed on. */
function plantRows(dir: string, rows: Row[]): number[] {
  const first = manifestLines(dir).length + 1;
  appendFileSync(join(dir, 'out', 'manifest.jsonl'), rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return rows.map((_, i) => first + i);
}

/**
 * Watches a FIFO for a reader: a write end opens (without waiting) only while something holds it open
 * for reading. The write end is closed at once, so the reader gets end-of-file and goes on.
 */
function watchFifo(path: string): { opened: () => boolean; stop: () => void } {
  let opened = false;
  const timer = setInterval(() => {
    try {
      closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
      opened = true;
    } catch {
      // no reader
    }
  }, 20);
  return { opened: () => opened, stop: () => clearInterval(timer) };
}

describe('a planted manifest or picks file', () => {
  const e2e = useTemporalAndSimulator(KEY, { ports: [0], renderMs: [100, 300], seed: 31 });

  it('results prints no path outside the output location and no control character; it warns naming the lines', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'planted-kept',
      baseUrls: e2e.sim.urls,
      items: [
        { id: 'a', prompt: 'kept a' },
        { id: 'b', prompt: 'kept b' },
      ],
    });
    const first = await runCli(['run', job], { env: e2e.env });
    assert.equal(first.code, 0, `${first.stdout}\n${first.stderr}`);
    const outside = '../../home/thesis/chapter1.docx';
    const newline = '002-b.mp4\n/home/thesis/chapter2.docx';
    const planted = plantRows(dir, [
      { ...rowOf(dir, 'a'), file: outside },
      { ...rowOf(dir, 'b'), file: newline },
    ]);
    const storage = openStorage({ storage: 'local', dir: join(dir, 'out') });
    const at = new Date().toISOString();
    await appendPicks(storage, [
      { key: 'a', verdict: 'keep', at },
      { key: 'b', verdict: 'keep', at },
    ]);

    const kept = await runCli(['results', job, '--kept'], { env: e2e.env });
    assert.equal(kept.code, 0, kept.stderr);
    assert.equal(kept.stdout, `${join(dir, 'out', '001-a.mp4')}\n${join(dir, 'out', '002-b.mp4')}\n`, 'the valid rows, and only they');
    for (const line of planted) assert.match(kept.stderr, new RegExp(`manifest\\.jsonl:${line}: .*skipped`), `warns naming line ${line}`);

    for (const format of ['table', 'csv', 'json']) {
      const shown = await runCli(['results', job, '--format', format], { env: e2e.env });
      assert.equal(shown.code, 0, shown.stderr);
      assert.doesNotMatch(shown.stdout, /thesis|\.\.\//, `results --format ${format} shows no planted name`);
      assert.match(shown.stderr, new RegExp(`manifest\\.jsonl:${planted[0]}: `));
    }
    const keptJson = await runCli(['results', job, '--kept', '--format', 'json'], { env: e2e.env });
    assert.deepEqual(
      (JSON.parse(keptJson.stdout) as Array<{ path: string }>).map((k) => k.path),
      [join(dir, 'out', '001-a.mp4'), join(dir, 'out', '002-b.mp4')],
    );
    const status = await runCli(['status', job], { env: e2e.env });
    assert.doesNotMatch(status.stdout + status.stderr, /thesis/);
  });

  it('a malformed and a truncated row are skipped with a warning naming their lines; the job renders every item', async () => {
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'planted-malformed',
      baseUrls: e2e.sim.urls,
      items: ['a', 'b', 'c'].map((id) => ({ id, prompt: `malformed ${id}` })),
    });
    mkdirSync(join(dir, 'out'));
    // Line 1 lacks most fields (its prompt among them); line 2 was cut short, without its newline.
    writeFileSync(join(dir, 'out', 'manifest.jsonl'), '{"key":"old","state":"failed","cost_usd":0}\n{"key":"a","state":"succ');
    const run = await runCli(['run', job], { env: e2e.env });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.deepEqual(
      readdirSync(join(dir, 'out'))
        .filter((n) => n.endsWith('.mp4'))
        .sort(),
      ['001-a.mp4', '002-b.mp4', '003-c.mp4'],
    );
    assert.match(run.stderr, /manifest\.jsonl:1: .*"prompt".*skipped/);
    assert.match(run.stderr, /manifest\.jsonl:2: .*skipped/);
    assert.doesNotMatch(run.stderr, /Workflow execution failed/);
  });

  it('an HLS playlist named .mp4 is never read by ffmpeg or ffprobe: report and review show a placeholder', async (t) => {
    const tools = await findMediaTools();
    if (!tools.ffmpeg || !tools.ffprobe) return t.skip('needs ffmpeg and ffprobe');
    const dir = tempDir();
    const job = writeJob(dir, {
      name: 'planted-hls',
      baseUrls: e2e.sim.urls,
      items: [
        { id: 'a', prompt: 'hls a' },
        { id: 'b', prompt: 'hls b' },
      ],
    });
    const first = await runCli(['run', job], { env: e2e.env });
    assert.equal(first.code, 0, `${first.stdout}\n${first.stderr}`);
    // A private segment outside the job's folder, as a FIFO: whoever opens it to read is seen.
    const elsewhere = tempDir();
    const secret = join(elsewhere, 'secret.ts');
    execFileSync('mkfifo', [secret]);
    const playlist = `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXTINF:1.0,\n${secret}\n#EXT-X-ENDLIST\n`;
    writeFileSync(join(dir, 'out', 'evil.mp4'), playlist);
    // Row b names the playlist: no `ratio`, so ffprobe would be asked for its size too.
    const { ratio: _r, resolution: _s, seconds: _d, ...b } = rowOf(dir, 'b');
    plantRows(dir, [{ ...b, file: 'evil.mp4' }]);
    const fifo = watchFifo(secret);
    try {
      const report = await runCli(['report', job], { env: e2e.env });
      assert.equal(report.code, 0, report.stderr);
      assert.equal(fifo.opened(), false, 'report: nothing opened the segment outside the folder');
      const html = readFileSync(join(dir, 'out', 'report.html'), 'utf8');
      assert.ok(!existsSync(join(dir, 'out', 'posters', 'evil.mp4.jpg')), 'no poster of the playlist');
      assert.doesNotMatch(html, /posters\/evil\.mp4\.jpg/);
      assert.match(html, /posters\/001-a\.mp4\.jpg/, 'the real video still has its poster');

      const live = new LiveJob({ storage: openStorage({ storage: 'local', dir: join(dir, 'out') }), localDir: join(dir, 'out'), tools });
      await live.start();
      assert.equal(fifo.opened(), false, 'review: nothing opened the segment outside the folder');
      assert.equal(live.media.get('evil.mp4')?.poster, undefined);
      assert.equal(live.media.get('001-a.mp4')?.poster, 'posters/001-a.mp4.jpg');
    } finally {
      fifo.stop();
    }
  });
});
