// A finished job of many takes for the review page's tests: source items x ratios x takes, two
// models, a few failures, real small H.264 files (a handful of distinct clips made by ffmpeg, copied
// under each take's name) and their poster frames, and the manifest that describes them.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { ManifestRow } from '../../storage/manifest';

const run = promisify(execFile);

export const RATIOS = ['16:9', '9:16'] as const;
const SIZES: Record<(typeof RATIOS)[number], string> = { '16:9': '320x180', '9:16': '180x320' };
const SOURCES = ['testsrc', 'testsrc2', 'smptebars', 'rgbtestsrc'];
export const MODELS = ['veo-3-fast', 'veo-3.1-fast-generate-001'];
export const MOODS = ['calm', 'bold'];
export const HOSTILE_PROMPT = 'bars <script>window.__pwned = 1</script> & "quotes" <img src=x onerror="window.__pwned=2">';

export interface TakesJob {
  rows: ManifestRow[];
  /** Keys of the takes that did not succeed, in index order. */
  failed: string[];
}

async function makeClip(path: string, source: string, size: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await run('ffmpeg', [
    ...['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-f', 'lavfi', '-i', `${source}=size=${size}:rate=15`],
    ...['-t', '1', '-c:v', 'libx264', '-profile:v', 'high', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', path],
  ]);
}

async function makePoster(video: string, poster: string): Promise<void> {
  await mkdir(dirname(poster), { recursive: true });
  await run('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-nostdin',
    '-y',
    '-i',
    video,
    '-frames:v',
    '1',
    '-vf',
    'scale=480:-2',
    poster,
  ]);
}

/**
 * Writes `items` x 2 ratios x `takes` takes into `dir` (videos under clips/, posters under
 * posters/, manifest.jsonl). Every `failEvery`-th take fails (some time out) instead.
 */
export async function writeTakesJob(dir: string, options: { items: number; takes: number; failEvery?: number }): Promise<TakesJob> {
  const base = join(dir, '.clips');
  const clips = new Map<string, string>();
  for (const ratio of RATIOS) {
    for (const source of SOURCES) {
      const clip = join(base, `${source}-${ratio.replace(':', 'x')}.mp4`);
      await makeClip(clip, source, SIZES[ratio]);
      await makePoster(clip, `${clip}.jpg`);
      clips.set(`${source}/${ratio}`, clip);
    }
  }
  const rows: ManifestRow[] = [];
  const failed: string[] = [];
  const later = new Date(Date.now() + 60_000);
  let index = 0;
  // Takes of one prompt share its index (docs/takes.md); `n` counts renders.
  let n = 0;
  for (let item = 1; item <= options.items; item++) {
    const model = MODELS[item % MODELS.length] as string;
    const mood = MOODS[Math.floor(item / 2) % MOODS.length] as string;
    const prompt = item === 3 ? HOSTILE_PROMPT : `Shot ${item}: a ${mood} tracking shot of a red shoe on a wet street at dusk`;
    // Keys as the job file expands them (jobfile/expand.ts): an id, a matrix suffix, a take suffix.
    const id = `shoe-${item}`;
    for (const ratio of RATIOS) {
      index += 1;
      for (let take = 1; take <= options.takes; take++) {
        n += 1;
        const base = `${id}.${ratio.replace(':', '-')}`;
        const key = take === 1 ? base : `${base}~t${take}`;
        const common = {
          key,
          id,
          index,
          model,
          protocol: model === 'veo-3.1-fast-generate-001' ? ('openai' as const) : ('general' as const),
          prompt,
          enhanced_prompt: item % 5 === 0 ? `${prompt}, 35 mm, shallow depth of field, slow dolly in` : null,
          task_id: `task_${n.toString(36)}_${'x'.repeat(4)}`,
          base_url: 'http://127.0.0.1:8787',
          created_at: new Date(Date.UTC(2026, 0, 1, 10, 0, n)).toISOString(),
          finished_at: new Date(Date.UTC(2026, 0, 1, 10, 1, n)).toISOString(),
          polls: 3,
          take,
          vars: { ratio, mood },
          seed: 1000 + n,
          seconds: 4,
          ratio,
          resolution: ratio === '16:9' ? '1280x720' : '720x1280',
          cost_usd: 0.4,
          cost_source: 'estimated' as const,
        };
        if (options.failEvery && n % options.failEvery === 0) {
          const state = n % (options.failEvery * 3) === 0 ? ('timed_out' as const) : ('failed' as const);
          const error =
            state === 'failed'
              ? { kind: 'content_policy', message: `Rejected <by policy> for take ${n}.` }
              : { kind: 'timeout', message: 'Still rendering after 30m.' };
          rows.push({ ...common, state, file: null, bytes: null, sha256: null, error });
          failed.push(key);
          continue;
        }
        const file = `clips/${String(n).padStart(4, '0')}-shoe-${item}-${ratio.replace(':', 'x')}-t${take}.mp4`;
        const clip = clips.get(`${SOURCES[(item + take) % SOURCES.length]}/${ratio}`) as string;
        await mkdir(dirname(join(dir, file)), { recursive: true });
        await copyFile(clip, join(dir, file));
        const poster = join(dir, 'posters', `${file}.jpg`);
        await mkdir(dirname(poster), { recursive: true });
        await copyFile(`${clip}.jpg`, poster);
        // A poster newer than its video is reused as it is (review/report/posters.ts).
        await utimes(poster, later, later);
        rows.push({ ...common, state: 'succeeded', file, bytes: (await stat(clip)).size, sha256: null, error: null });
      }
    }
  }
  await writeFile(join(dir, 'manifest.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return { rows, failed };
}
