// Every reelflow_* family on /metrics from the worker's start, at zero (docs/deploy.md, "Health").
// The SDK's exporter shows a series only once something was recorded under it, so an alert on a
// missing series ("no items ended") would fire for an idle worker, and one on a rate would have no
// series to compute from. Each family gets one baseline series, labelled with the worker's namespace
// and task queue only: its value stays 0, and a sum over the family counts what the labelled series
// (which also carry activityType, model, outcome...) hold.
import { METRICS, RENDER_SECONDS_BUCKETS } from '../activities/metrics';

export type BaselineLabels = Record<string, string>;

/** Prometheus text format: a label value's backslash, double quote and newline are escaped. */
function labelText(labels: BaselineLabels, extra: [string, string][] = []): string {
  const pairs = [...Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)), ...extra];
  const escape = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
  return `{${pairs.map(([key, value]) => `${key}="${escape(value)}"`).join(',')}}`;
}

/** The baseline sample lines of one family. */
function baselineSamples(metric: (typeof METRICS)[keyof typeof METRICS], labels: BaselineLabels): string[] {
  if (metric.kind !== 'histogram') return [`${metric.name}${labelText(labels)} 0`];
  return [
    ...[...RENDER_SECONDS_BUCKETS.map(String), '+Inf'].map((le) => `${metric.name}_bucket${labelText(labels, [['le', le]])} 0`),
    `${metric.name}_sum${labelText(labels)} 0`,
    `${metric.name}_count${labelText(labels)} 0`,
  ];
}

/**
 * The exporter's text with a baseline series added to every reelflow_* family: inside the family's
 * block when the exporter shows it (unless a series with exactly these labels is already there),
 * else as a block of its own at the end.
 */
export function withBaseline(exposition: string, labels: BaselineLabels): string {
  const trimmed = exposition.replace(/\n+$/, '');
  const lines = trimmed === '' ? [] : trimmed.split('\n');
  for (const metric of Object.values(METRICS)) {
    const samples = baselineSamples(metric, labels);
    const typeLine = lines.findIndex((line) => line.startsWith(`# TYPE ${metric.name} `));
    if (typeLine < 0) {
      const help = metric.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
      lines.push(`# HELP ${metric.name} ${help}`, `# TYPE ${metric.name} ${metric.kind}`, ...samples);
      continue;
    }
    // The family's block runs from its TYPE line to the next comment line (the next family).
    let end = typeLine + 1;
    while (end < lines.length && !lines[end]!.startsWith('#')) end++;
    const present = new Set(lines.slice(typeLine + 1, end).map((line) => line.slice(0, line.lastIndexOf(' '))));
    const missing = samples.filter((sample) => !present.has(sample.slice(0, sample.lastIndexOf(' '))));
    lines.splice(end, 0, ...missing);
  }
  return `${lines.join('\n')}\n`;
}
