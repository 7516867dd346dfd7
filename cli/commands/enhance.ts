// `reelflow enhance JOB` (and `run --enhance-only`): only the prompt rewrites, made from this
// process with the key from its environment (client/enhance.ts), stored beside the outputs
// (storage/rewrites.ts) and shown beside the prompts before any render is paid for. The renders then
// send exactly the stored texts (activities/render.ts enhancePrompt finds them). docs/enhance.md is
// the user's page.
import type { Command } from 'commander';
import { redact } from '../../gateway';
import type { Plan } from '../../jobfile/plan';
import { textToRender } from '../../storage/rewrites';
import { loadPlanOrExplain } from '../../client/jobs';
import { asExitError, enhanceJob, paidCall, type EnhanceOutcome, type ItemRewrite } from '../../client/enhance';
import { spendLines } from '../../client/spend';
import { collect, parseAllowKeys, refuseDisallowedKeyUses } from '../../client/keys';
import { createOutput, type Output } from '../output';
import { fitWidth, padToWidth, plainText, wrapToWidth } from '../../client/terminal-text';

export interface EnhanceOptions {
  json?: boolean;
  reEnhance?: boolean;
  allowKey?: string[];
}

export function registerEnhanceCommand(program: Command): void {
  program
    .command('enhance')
    .description("rewrite the job's prompts through Messages (enhance:) and show them beside the originals; renders nothing")
    .argument('<job>', 'the job file (YAML)')
    .option('--re-enhance', 'ask again for every item, even where a stored rewrite of the same prompt exists (the new one is used)')
    .option('--json', 'one JSON document on stdout')
    .option(
      '--allow-key <VARIABLE@ORIGIN>',
      'let the job send $VARIABLE as its gateway key to ORIGIN, for this command only (repeatable; docs/keys.md)',
      collect,
      [],
    )
    .action((jobFile: string, options: EnhanceOptions) => enhanceCommand(jobFile, options));
}

/** The whole command: rewrite, show, and set the exit status (1 when some item has no rewrite). */
export async function enhanceCommand(jobFile: string, options: EnhanceOptions, planned?: Plan): Promise<void> {
  const out = createOutput(!!options.json);
  const plan = planned ?? (await loadPlanOrExplain(jobFile));
  if (!planned) {
    for (const warning of plan.warnings) out.note(`warning: ${warning}`);
    // Before the first Messages call: which key goes where is the user's decision (`run` checked its own plan).
    refuseDisallowedKeyUses(jobFile, plan, parseAllowKeys(options.allowKey));
  }
  const outcome = await enhanceJob(plan, { again: !!options.reEnhance, note: (line) => out.note(line) });
  if (out.json) out.result(jsonView(plan, outcome));
  else for (const line of sideBySide(outcome.rewrites, terminalColumns())) out.line(line);
  out.note(countsLine(outcome));
  for (const line of outcome.spend ? spendLines(outcome.spend) : []) out.note(line);
  finish(outcome, out);
}

/**
 * `run --re-enhance`: fresh rewrites of every item before the run starts; the renders find them.
 * Throws (nothing is started) when some item got none.
 */
export async function reEnhanceBeforeRun(plan: Plan, out: Output): Promise<void> {
  const outcome = await enhanceJob(plan, { again: true, note: (line) => out.note(line) });
  out.note(`${countsLine(outcome)}; see them with: reelflow enhance ${plan.jobFile}`);
  for (const line of outcome.spend ? spendLines(outcome.spend) : []) out.note(line);
  const failed = outcome.rewrites.filter((r) => r.error || !r.record);
  if (outcome.stoppedBy) throw asExitError(outcome.stoppedBy);
  if (failed.length > 0) {
    for (const f of failed.slice(0, 5)) out.note(`  #${f.item.index} ${plainText(f.item.key)}: ${f.error?.message ?? 'not asked'}`);
    throw new Error(`${failed.length} prompt(s) could not be rewritten again: nothing was started; run again to retry them`);
  }
}

/** The exit status: that of a job-wide cause, else 1 when some item has no rewrite. */
function finish(outcome: EnhanceOutcome, out: Output): void {
  if (outcome.stoppedBy) {
    const stopped = asExitError(outcome.stoppedBy);
    out.note(`stopped: ${stopped.message}`);
    process.exitCode = stopped.exitCode;
    return;
  }
  if (outcome.rewrites.some((r) => !r.record)) process.exitCode = 1;
}

function countsLine(outcome: EnhanceOutcome): string {
  const reused = outcome.rewrites.filter((r) => r.record && r.reused).length;
  const asked = outcome.rewrites.filter((r) => r.record && !r.reused).length;
  const failed = outcome.rewrites.filter((r) => r.error).length;
  const notAsked = outcome.rewrites.length - reused - asked - failed;
  return (
    `${outcome.rewrites.length} item(s): ${reused} reused from ${outcome.location}, ${asked} asked of Messages` +
    (failed ? `, ${failed} failed` : '') +
    (notAsked ? `, ${notAsked} not asked` : '')
  );
}

function jsonView(plan: Plan, outcome: EnhanceOutcome): unknown {
  return {
    job: plan.job,
    model: plan.enhance?.model,
    location: outcome.location,
    stopped: outcome.stoppedBy ? redact(outcome.stoppedBy.message) : null,
    spend: outcome.spend ?? null,
    items: outcome.rewrites.map(({ item, record, reused, error }) => {
      // What the call made now cost; none when the stored rewrite was reused or the model has no price.
      const paid = reused ? undefined : paidCall(record)[0];
      return {
        index: item.index,
        key: item.key,
        id: item.id ?? null,
        prompt: item.request.prompt,
        enhanced_prompt: record ? textToRender(record, item.request.prompt) : null,
        reused,
        model: record?.model ?? null,
        at: record?.at ?? null,
        usage: record?.usage ?? null,
        cost_usd: paid?.cost_usd ?? null,
        cost_source: paid?.cost_source ?? null,
        error: error ? `${error.kind}: ${error.message}` : null,
      };
    }),
  };
}

/** The terminal's width: the terminal itself, else $COLUMNS, else 100. */
export function terminalColumns(): number {
  const fromTty = process.stdout.isTTY ? process.stdout.columns : undefined;
  return Math.max(40, fromTty || Number(process.env.COLUMNS) || 100);
}

/** Each item: a title line, then its prompt and its rewrite in two columns, wrapped to `columns`. */
export function sideBySide(rewrites: readonly ItemRewrite[], columns: number): string[] {
  const left = Math.floor((columns - 3) / 2);
  const right = columns - 3 - left;
  const row = (a: string, b: string) => `${padToWidth(a, left)} │ ${b}`.trimEnd();
  const lines = [row('PROMPT', 'REWRITE')];
  for (const { item, record, reused, error } of rewrites) {
    const where = record ? (reused ? `stored ${record.at}` : 'asked now') : 'no rewrite';
    lines.push(fitWidth(plainText(`#${item.index} ${item.key} (${where})`), columns));
    const shown = error
      ? `error: ${error.kind}: ${error.message}`
      : record
        ? (record.rewrite ?? '(the gateway answered no text: the prompt is sent as written)')
        : '(not asked: the job stopped first)';
    const a = wrapToWidth(item.request.prompt, left);
    const b = wrapToWidth(shown, right);
    for (let i = 0; i < Math.max(a.length, b.length); i++) lines.push(row(a[i] ?? '', b[i] ?? ''));
  }
  return lines;
}
