// `reelflow validate JOB.yaml`: check a job file and show its plan. Sends nothing.
import { join } from 'node:path';
import type { Command } from 'commander';
import { formatJobFileError, loadJobFile, type LoadResult } from '../../jobfile';
import type { Plan, PlanItem } from '../../jobfile/plan';
import { estimateLines, estimatePlan, unpricedMessage, unpricedModels, userPrices } from '../../client/estimate';
import { ALLOW_READ_HELP, allowedReads } from '../../client/read-allowance';
import { collect, disallowedKeyUses } from '../../client/keys';

export interface ValidateOptions {
  json?: boolean;
  date?: string;
  /** `--prices FILE`: a LiteLLM-format prices file (docs/costs.md). */
  prices?: string;
  /** `--allow-read DIR`: folders outside the job file's own it may read (client/read-allowance.ts). */
  allowRead?: string[];
}

interface Out {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stdoutIsTTY: boolean;
}

const processOut: Out = {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  get stdoutIsTTY() {
    return process.stdout.isTTY === true;
  },
};

/** Where an item's video goes (without the extension the content type adds). */
export function outputLocation(plan: Plan, item: PlanItem): string {
  const o = plan.output;
  if (o.storage === 's3' && o.s3) return `s3://${o.s3.bucket}/${o.s3.prefix}${item.outputName}`;
  return join(o.dir ?? '.', item.outputName);
}

/** The plan in lines; `verdict` heads it (`valid`, or why run would refuse it). */
export function summaryLines(plan: Plan, verdict = 'valid'): string[] {
  const lines = [`${plan.job}: ${verdict}, ${plan.items.length} item${plan.items.length === 1 ? '' : 's'}`];
  const counts = new Map<string, number>();
  for (const item of plan.items) {
    const k = `${item.request.model} (${item.request.protocol} protocol)`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  for (const [k, n] of counts) lines.push(`  ${String(n).padStart(6)}  ${k}`);
  const o = plan.output;
  lines.push(
    o.storage === 's3' && o.s3
      ? `output:   s3://${o.s3.bucket}/${o.s3.prefix} (region ${o.s3.region}${o.s3.endpoint ? `, endpoint ${o.s3.endpoint}` : ''})`
      : `output:   ${o.dir ?? ''}`,
  );
  const first = plan.items[0];
  if (first) lines.push(`          e.g. ${outputLocation(plan, first)}.mp4`);
  const [primary, ...alternates] = plan.gateway.baseUrls;
  lines.push(`gateway:  ${primary ?? ''}${alternates.length ? ` (+ ${alternates.join(', ')})` : ''}; key from $${plan.gateway.apiKeyEnv}`);
  lines.push(
    `window:   ${plan.concurrency.maxInFlight} in flight${plan.concurrency.createsPerMinute ? `, at most ${plan.concurrency.createsPerMinute} creates a minute` : ''}`,
  );
  if (plan.enhance) lines.push(`enhance:  prompts rewritten by ${plan.enhance.model} first`);
  lines.push(
    plan.schedule ? `schedule: ${plan.schedule.description ?? plan.schedule.cron} (overlap: ${plan.schedule.overlap})` : 'schedule: none',
  );
  lines.push(...estimateLines(estimatePlan(plan), plan.budget));
  if (plan.warnings.length) {
    lines.push(`warnings (${plan.warnings.length}):`);
    for (const w of plan.warnings) lines.push(`  ${w}`);
  }
  return lines;
}

export function jsonReport(result: LoadResult): unknown {
  if (result.ok) {
    const { plan } = result;
    return {
      ok: true,
      job: plan.job,
      items: plan.items.map((item) => ({
        key: item.key,
        id: item.id ?? null,
        index: item.index,
        model: item.request.model,
        protocol: item.request.protocol,
        prompt: item.request.prompt,
        output: outputLocation(plan, item),
      })),
      errors: [],
      warnings: plan.warnings,
      estimate: estimatePlan(plan),
      budget: plan.budget ? { max_usd: plan.budget.maxUsd } : null,
    };
  }
  return {
    ok: false,
    job: result.job ?? null,
    items: [],
    errors: result.errors.map((e) => ({ file: e.file, line: e.line, column: e.column, path: e.path ?? null, message: e.message })),
    warnings: result.warnings,
    estimate: null,
    budget: null,
  };
}

/**
 * What `run` refuses of a valid job file before anything starts: a budget that cannot hold an item
 * it cannot price (docs/costs.md). validate sends nothing, so it knows the job file's prices and
 * yours, not the gateway's: it says where to see those.
 */
function budgetRefusal(plan: Plan): { file: string; line: 0; column: 0; path: string; message: string } | undefined {
  const unpriced = plan.budget ? unpricedModels(plan) : [];
  if (unpriced.length === 0) return undefined;
  return {
    file: plan.jobFile,
    line: 0,
    column: 0,
    path: 'budget',
    message:
      `run refuses this job: ${unpricedMessage(unpriced)} ` +
      '(a price your gateway publishes counts too: `reelflow run JOB --dry-run` reads them and shows the estimate)',
  };
}

/** Runs the command; returns the exit status (0 valid, 2 invalid or unreadable). */
export async function runValidate(file: string, options: ValidateOptions, out: Out = processOut): Promise<number> {
  const allowRead = allowedReads(options.allowRead);
  const result = await loadJobFile(file, {
    ...(options.date ? { runDate: options.date } : {}),
    ...userPrices({ prices: options.prices }),
    allowRead,
  });
  // The user's key rule (docs/keys.md): `run` refuses what it does not allow. A never-sent variable
  // is already warned about at its position.
  if (result.ok) {
    for (const refusal of disallowedKeyUses(result.plan, []).filter((r) => !r.never)) {
      result.plan.warnings.push(`${file}: warning: run refuses this job: ${refusal.message}`);
    }
  }
  const refused = result.ok ? budgetRefusal(result.plan) : undefined;
  if (refused && result.ok) {
    // The plan and its estimate still print: they show which model has no price, and what the rest costs.
    if (options.json) out.stdout(`${JSON.stringify({ ...(jsonReport(result) as object), ok: false, errors: [refused] })}\n`);
    else out.stdout(`${summaryLines(result.plan, 'refused (below)').join('\n')}\n`);
    out.stderr(`reelflow: ${file}: ${refused.message}\n${file}: 1 problem; nothing was started\n`);
    return 2;
  }
  if (options.json) out.stdout(`${JSON.stringify(jsonReport(result))}\n`);
  if (!result.ok) {
    for (const e of result.errors) out.stderr(`${e.line > 0 ? formatJobFileError(e) : `reelflow: ${e.file}: ${e.message}`}\n`);
    if (result.errors.some((e) => e.line > 0)) {
      for (const w of result.warnings) out.stderr(`${w}\n`);
      const n = result.errors.length;
      out.stderr(`${file}: ${n} problem${n === 1 ? '' : 's'}; nothing was started\n`);
    }
    return 2;
  }
  const lines = summaryLines(result.plan);
  if (!options.json) out.stdout(`${lines.join('\n')}\n`);
  else if (!out.stdoutIsTTY) out.stderr(`${lines.join('\n')}\n`);
  return 0;
}

export function registerValidateCommand(program: Command): void {
  program
    .command('validate')
    .description(
      'check a job file and print its plan: items per model and protocol, output location, schedule, estimated cost; sends nothing',
    )
    .argument('<job>', 'the job file (YAML)')
    .option('--json', 'print {"ok", "job", "items", "errors"} as one JSON document on stdout')
    .option('--date <YYYY-MM-DD>', 'the run date used for {date} (default: today)')
    .option(
      '--prices <file>',
      "a prices file in LiteLLM's model cost map format: your prices, which win over the job file's (docs/costs.md)",
    )
    .option('--allow-read <dir>', ALLOW_READ_HELP, collect, [])
    .action(async (job: string, options: ValidateOptions) => {
      process.exitCode = await runValidate(job, options);
    });
}
