// A test reporter that prints each test file's wall time, longest first, when the run ends: the
// suite has a time budget, and this is where to look when it grows. Used beside the spec reporter
// (scripts/test.sh); each file runs in a process of its own, which the runner reports as a test
// named by the file's path (absolute or relative to the working directory, by Node version).
// A file whose process outlives its tests by more than a few seconds is named with the time: a
// timer or a handle left behind (a race's timeout never cleared) keeps the process, and the run, waiting.
import { resolve } from 'node:path';

const TAIL_SHOWN_MS = 10_000;

export default async function* fileDurations(source) {
  const durations = new Map();
  /** Per file, the time of its top-level tests (they run one after another). */
  const tested = new Map();
  for await (const event of source) {
    if (event.type !== 'test:complete' && event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, file, nesting, details } = event.data;
    if (nesting !== 0 || !file) continue;
    if (resolve(name) === file) {
      if (event.type === 'test:complete') durations.set(file, details.duration_ms);
    } else if (event.type !== 'test:complete') {
      tested.set(file, (tested.get(file) ?? 0) + (details?.duration_ms ?? 0));
    }
  }
  if (durations.size === 0) return;
  const root = process.cwd() + '/';
  const rows = [...durations].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  yield `\nfile durations (${rows.length} files, ${(total / 1000).toFixed(0)} s of files' time):\n`;
  for (const [file, ms] of rows) {
    const tail = tested.has(file) ? ms - tested.get(file) : 0;
    const note = tail > TAIL_SHOWN_MS ? `  (${(tail / 1000).toFixed(0)} s outside its tests: a handle left open?)` : '';
    yield `${(ms / 1000).toFixed(1).padStart(8)} s  ${file.replace(root, '')}${note}\n`;
  }
}
