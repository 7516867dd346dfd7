// A test reporter that prints each test file's wall time, longest first, when the run ends: the
// suite has a time budget, and this is where to look when it grows. Used beside the spec reporter
// (scripts/test.sh); each file runs in a process of its own, which the runner reports as a test
// named by the file's path (absolute or relative to the working directory, by Node version).
import { resolve } from 'node:path';

export default async function* fileDurations(source) {
  const durations = new Map();
  for await (const event of source) {
    if (event.type !== 'test:complete') continue;
    const { name, file, nesting, details } = event.data;
    if (nesting === 0 && file && resolve(name) === file) durations.set(file, details.duration_ms);
  }
  if (durations.size === 0) return;
  const root = process.cwd() + '/';
  const rows = [...durations].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  yield `\nfile durations (${rows.length} files, ${(total / 1000).toFixed(0)} s of files' time):\n`;
  for (const [file, ms] of rows) yield `${(ms / 1000).toFixed(1).padStart(8)} s  ${file.replace(root, '')}\n`;
}
