// Colours and the byte and duration formats every view of a job shares: the commands' lines, the
// report's and any later UI's.

export const color = {
  enabled: process.stderr.isTTY && !process.env.NO_COLOR,
  wrap(code: number, text: string): string {
    return this.enabled ? `\u001b[${code}m${text}\u001b[0m` : text;
  },
  green(text: string) {
    return this.wrap(32, text);
  },
  red(text: string) {
    return this.wrap(31, text);
  },
  yellow(text: string) {
    return this.wrap(33, text);
  },
  dim(text: string) {
    return this.wrap(2, text);
  },
  bold(text: string) {
    return this.wrap(1, text);
  },
};

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}
