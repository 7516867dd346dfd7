// `reelflow enhance JOB` (and `run --enhance-only`): only the prompt rewrites, made from this
// process with the key from its environment, stored beside the outputs (storage/records/rewrites.ts) and
// shown beside the prompts before any render is paid for. The renders then send exactly the stored
// texts (activities/render.ts enhancePrompt finds them). docs/enhance.md is the user's page.
import type { Command } from 'commander';
import { rewriteOnce, rewritePricer } from '../../activities/rewrite';
import {
  AuthError,
  GatewayUnavailableError,
  ModelUnavailableError,
  QuotaOrPermissionError,
  RouteNotFoundError,
  createGatewayClient,
  isGatewayError,
  redact,
} from '../../gateway';
import type { Plan, PlanItem } from '../../jobfile/plan';
import { openStorage } from '../../storage';
import { RewriteStore, textToRender, type RewriteCall, type RewriteRecord } from '../../storage/records/rewrites';
import type { ManifestRow } from '../../storage/manifest/row';
import { StorageError } from '../../storage/objects/errors';
import { InfrastructureError, UsageError } from '../errors';
import { loadPlanOrExplain, pricedAsStarted } from '../../client/jobs';
import { rewritePriceOf } from '../../jobfile/prices';
import { estimatePlan } from '../estimate';
import { spendLines, spendOf, type JobSpend } from '../spend';
import { collect, parseAllowKeys, refuseDisallowedKeyUses } from '../keys';
import { createOutput, type Output } from '../output';
import { fitWidth, padToWidth, plainText, wrapToWidth } from '../terminal-text';

export interface EnhanceOptions {
  json?: boolean;
  reEnhance?: boolean;
  allowKey?: string[];
}

export interface ItemRewrite {
  item: PlanItem;
  record?: RewriteRecord;
  reused: boolean;
  error?: { kind: string; message: string };
}

export interface EnhanceOutcome {
  rewrites: ItemRewrite[];
  /** Where the records are. */
  location: string;
  /** A cause that is the job's, not an item's (key, model, route, every address down): the rest were not asked. */
  stoppedBy?: Error;
  /**
   * What the Messages calls made now cost (docs/costs.md), priced from their usage as a render's are,
   * beside the estimate of the job's rewrites; undefined when the enhance model has no price.
   */
  spend?: JobSpend;
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

/** Rewrites every item of the plan, reusing stored records unless `again`, `max_in_flight` at a time. */
export async function enhanceJob(plan: Plan, options: { again: boolean; note: (line: string) => void }): Promise<EnhanceOutcome> {
  const enhance = plan.enhance;
  if (!enhance) {
    throw new UsageError(`${plan.jobFile} has no enhance: block, so its prompts are sent as written: there is nothing to rewrite`);
  }
  const apiKey = process.env[plan.gateway.apiKeyEnv];
  if (!apiKey) {
    throw new UsageError(
      `the environment variable ${plan.gateway.apiKeyEnv} is not set: export your gateway key in it ` +
        '(gateway.api_key_env in the job file names the variable)',
    );
  }
  const storage = openStorage(plan.output);
  const store = new RewriteStore(storage);
  await asInfrastructure(() => storage.checkWritable());
  // Priced as status prices the job's spend (the prices its runs recorded beneath the job file's),
  // so a rewrite paid here counts the same wherever it shows (docs/costs.md).
  const priced = await pricedAsStarted(plan);
  const price = rewritePriceOf(priced.pricing ?? {}, enhance.model);
  const gateway = createGatewayClient({
    baseUrls: plan.gateway.baseUrls,
    apiKey,
    apiKeyEnv: plan.gateway.apiKeyEnv,
    requestTimeoutMs: plan.gateway.requestTimeoutMs,
    allowPrivateTargets: plan.gateway.allowPrivateTargets,
    createRetries: plan.retries.create,
    // Failover notes, one per failed attempt, only with --verbose: the outcome of each item is shown anyway.
    log: (level, message) => {
      if (level === 'warn' && process.env.REELFLOW_VERBOSE === '1') options.note(`warning: ${message}`);
    },
  });
  const rewrites: ItemRewrite[] = plan.items.map((item) => ({ item, reused: false }));
  let stoppedBy: Error | undefined;
  let next = 0;
  // One call per prompt text (docs/enhance.md): the takes of an item, and items that send the same
  // prompt, share the first one's answer, even while it is still being asked.
  const asked = new Map<string, Promise<Awaited<ReturnType<typeof rewriteOnce>>>>();
  const worker = async (): Promise<void> => {
    while (!stoppedBy && next < rewrites.length) {
      const slot = rewrites[next++]!;
      try {
        const prompt = slot.item.request.prompt;
        const shared = asked.get(prompt);
        const pending =
          shared ??
          rewriteOnce({
            key: slot.item.key,
            prompt,
            enhance,
            store,
            again: options.again,
            ask: (message) => gateway.createMessage(message),
            payer: { by: 'enhance', priceOf: rewritePricer(price, enhance, prompt) },
          });
        if (!shared) asked.set(prompt, pending);
        const done = await pending;
        slot.record = done.record;
        // Only the first item of a prompt made the call: the others reuse its answer.
        slot.reused = shared ? true : done.reused;
      } catch (error) {
        if (error instanceof StorageError) {
          stoppedBy ??= new InfrastructureError(error.message);
        } else if (jobWide(error)) {
          stoppedBy ??= error;
        }
        slot.error = {
          kind: isGatewayError(error) ? error.kind : error instanceof StorageError ? 'storage' : 'error',
          message: redact(error instanceof Error ? error.message : String(error)),
        };
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(plan.concurrency.maxInFlight, rewrites.length)) }, worker));
  } finally {
    await gateway.close();
  }
  const estimate = estimatePlan(priced);
  const enhanceOnly = { ...estimate, per_model: estimate.per_model.filter((m) => m.role === 'enhance') };
  const spend = price
    ? spendOf(
        [],
        enhanceOnly,
        rewrites.flatMap((r) => (r.reused ? [] : paidCall(r.record))),
      )
    : undefined;
  return { rewrites, location: store.location, stoppedBy, ...(spend ? { spend } : {}) };
}

/** The call that made a record just now (its last): what it cost. */
function paidCall(record: RewriteRecord | undefined): RewriteCall[] {
  const call = record?.calls?.at(-1);
  return call && call.at === record?.at ? [call] : [];
}

/**
 * Result rows with the rewrite beside the prompt: the one the render sent (the manifest's), else the
 * stored rewrite of the same prompt with the job's enhance settings, if any.
 */
export async function withRewrites(plan: Plan, rows: readonly ManifestRow[]): Promise<ManifestRow[]> {
  const enhance = plan.enhance;
  if (!enhance) return rows.map((row) => ({ ...row, enhanced_prompt: row.enhanced_prompt ?? null }));
  const store = new RewriteStore(openStorage(plan.output));
  return Promise.all(
    rows.map(async (row) => {
      if (row.enhanced_prompt) return row;
      const stored = await store.find(row.prompt, enhance, row.key);
      return { ...row, enhanced_prompt: stored ? textToRender(stored, row.prompt) : null };
    }),
  );
}

/** Causes that every other item would meet too: asking on would only repeat them. */
function jobWide(error: unknown): error is Error {
  return (
    error instanceof AuthError ||
    error instanceof ModelUnavailableError ||
    error instanceof RouteNotFoundError ||
    error instanceof QuotaOrPermissionError ||
    error instanceof GatewayUnavailableError
  );
}

async function asInfrastructure(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    throw error instanceof StorageError ? new InfrastructureError(error.message) : error;
  }
}

/** A job-wide cause as the error its exit status says: 3 for storage or every address down, else 2 (key, model, route, quota). */
function asExitError(stopped: Error): InfrastructureError | UsageError {
  if (stopped instanceof InfrastructureError || stopped instanceof UsageError) return stopped;
  const message = redact(stopped.message);
  return stopped instanceof GatewayUnavailableError ? new InfrastructureError(message) : new UsageError(message);
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
