// `reelflow doctor [JOB.yaml]`: checks the set-up and says, one line per check, what to fix.
// Read-only: it never creates a video task (each is a paid render) and never prints the key.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { grantedOrigins, redactObject, registerSecret, type KeyUse } from '../../gateway';
import { formatJobFileError, loadJobFile } from '../../jobfile';
import { allowedReads } from '../../client/read-allowance';
import type { Plan } from '../../jobfile/plan';
import { openStorage } from '../../storage';
import { type Check, exitStatusOf, fail, ok, PROBE_TIMEOUT_MS, warn, withTimeout } from '../../client/doctor/check';
import { checkMessages, checkModels } from '../../client/doctor/catalog';
import { checkBases, gatewayNeeds, type KeyInfo, normalisationNotes } from '../../client/doctor/gateway';
import { Prober } from '../../client/doctor/http';
import { litellmWarning } from '../../client/doctor/litellm';
import { checkTemporal } from '../../client/doctor/temporal';
import {
  addGatewayPrices,
  estimateLines,
  estimatePlan,
  gatewayPricesLines,
  unpricedMessage,
  unpricedModels,
  userPrices,
  type GatewayPricesNote,
  type PlanEstimate,
} from '../../client/estimate';
import { createOutput, type Output } from '../output';
import { color } from '../../client/format';
import { disallowedKeyUses } from '../../client/keys';

const DEFAULT_KEY_ENV = 'GATEWAY_API_KEY';

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description(
      'check the set-up and say what to fix: job file, key variable, gateway addresses and the protocols each serves, ' +
        'Messages, models, Temporal, storage',
    )
    .argument('[job]', 'job file to check against (its gateway, models and output)')
    .option(
      '--json',
      'one JSON document on stdout: {"ok", "checks": [{"name", "status", "detail"}], "estimate", "gateway_prices", "budget"}',
    )
    .action(async (jobFile: string | undefined, options: { json?: boolean }) => {
      const out = createOutput(!!options.json);
      const findings: Findings = {};
      const checks = await runChecks(jobFile, (check) => printCheck(out, check), findings);
      const exit = exitStatusOf(checks);
      if (out.json) {
        out.line(exit === 0 ? 'ready: a run would work' : 'problems to fix before a run would work');
        out.result(
          redactObject({
            ok: exit === 0,
            checks: checks.map(({ name, status, detail }) => ({ name, status, detail })),
            // The estimate with the gateway's prices beneath the job's (docs/costs.md); null when not worked out.
            estimate: findings.estimate ?? null,
            gateway_prices: findings.gatewayPrices ?? null,
            budget: findings.budget ?? null,
          }),
        );
      } else {
        const failed = checks.filter((c) => c.status === 'fail').length;
        const warned = checks.filter((c) => c.status === 'warn').length;
        out.line(
          failed === 0
            ? `${color.green('ready')}: a run would work${warned ? ` (${warned} warning${warned === 1 ? '' : 's'} above)` : ''}`
            : `${color.red(`${failed} problem${failed === 1 ? '' : 's'}`)} to fix before a run would work`,
        );
      }
      process.exitCode = exit;
    });
}

function printCheck(out: Output, check: Check): void {
  const label = check.status === 'ok' ? color.green('ok  ') : check.status === 'warn' ? color.yellow('warn') : color.red('FAIL');
  out.line(`${label}  ${check.name}: ${check.detail}`);
}

/** What the checks found beside their lines, for `--json`. */
interface Findings {
  estimate?: PlanEstimate;
  gatewayPrices?: GatewayPricesNote;
  budget?: { max_usd: number };
}

async function runChecks(jobFile: string | undefined, report: (check: Check) => void, findings: Findings): Promise<Check[]> {
  const checks: Check[] = [];
  const add = (check: Check) => {
    checks.push(check);
    report(check);
  };
  const temporal = checkTemporal(); // in parallel with the gateway probes; reported in order

  const plan = jobFile === undefined ? undefined : await checkJobFile(jobFile, add);
  const key = keyCheck(plan?.gateway.apiKeyEnv ?? DEFAULT_KEY_ENV, add);
  // The user's key rule (docs/keys.md, client/keys.ts): no probe carries a key the rule does not allow there.
  const refusals = plan ? disallowedKeyUses(plan, []) : [];
  if (refusals.length)
    add(fail('key rule', `run refuses this job, so no gateway was probed:\n    ${refusals.map((r) => r.message).join('\n    ')}`, 'usage'));
  else if (plan) {
    await gatewayChecks(
      plan,
      key,
      { ...(key.key ? { key: key.key } : {}), keyOrigins: grantedOrigins(plan.gateway.baseUrls, refusals) },
      add,
    );
    add(await estimateCheck(plan, key, findings));
  } else if (jobFile === undefined) add(warn('gateway', 'not checked: pass a job file to check its gateway addresses, models and output'));
  add(await temporal);
  if (plan) add(await storageCheck(plan));
  return checks;
}

async function checkJobFile(jobFile: string, add: (check: Check) => void): Promise<Plan | undefined> {
  const name = 'job file';
  if (!existsSync(resolve(jobFile))) {
    add(fail(name, `${jobFile}: no such file`, 'usage'));
    return undefined;
  }
  const result = await loadJobFile(resolve(jobFile), { ...userPrices({}), allowRead: allowedReads() });
  if (!result.ok) {
    const problems = result.errors.map((e) => formatJobFileError(e));
    add(
      fail(
        name,
        `${jobFile} is not valid (${problems.length} problem${problems.length === 1 ? '' : 's'}); fix:\n    ${problems.join('\n    ')}`,
        'usage',
      ),
    );
    return undefined;
  }
  const { plan } = result;
  const models = [...new Set(plan.items.map((i) => i.request.model))];
  const summary =
    `${jobFile} is valid: job ${plan.job}, ${plan.items.length} item${plan.items.length === 1 ? '' : 's'}, ` +
    `model${models.length === 1 ? '' : 's'} ${models.join(', ')}${plan.schedule ? `, schedule "${plan.schedule.cron}" (${plan.schedule.timezone})` : ''}`;
  const others = plan.warnings.filter((w) => !/base address ".*" normalised to/.test(w));
  add(others.length ? warn(name, `${summary}; warnings:\n    ${others.join('\n    ')}`) : ok(name, summary));
  return plan;
}

function keyCheck(env: string, add: (check: Check) => void): KeyInfo {
  const key = process.env[env];
  if (!key) {
    add(
      fail(
        'key variable',
        `${env} is ${key === '' ? 'empty' : 'not set'}: put your gateway key (from the gateway's console) in it and ` +
          `export ${env} in the shell that runs reelflow; gateway.api_key_env in the job file names the variable`,
        'usage',
      ),
    );
    return { env };
  }
  registerSecret(key); // from here on every line and error passes through redact, which removes it
  add(ok('key variable', `${env} is set`));
  return { env, key };
}

/** `use`: the key and the origins the key rule lets it go to; every probe's header is decided by the gateway's route. */
async function gatewayChecks(plan: Plan, key: KeyInfo, use: KeyUse, add: (check: Check) => void): Promise<void> {
  const prober = new Prober(plan.gateway.baseUrls, use);
  try {
    const bases = await checkBases(prober, plan.gateway.baseUrls, key, normalisationNotes(plan.warnings), gatewayNeeds(plan));
    for (const b of bases) add(b.check);
    const litellm = litellmWarning(bases.flatMap((b) => (b.litellm === undefined ? [] : [{ base: b.base, version: b.litellm }])));
    if (litellm) add(litellm);
    const usable = bases.find((b) => b.usable)?.base;
    if (plan.enhance) {
      const messagesBase = bases.find((b) => b.servesMessages)?.base;
      if (!key.key) add(warn('messages', `not checked: ${key.env} is not set`));
      else if (!usable) add(warn('messages', 'not checked: no base address answers like the gateway'));
      else if (!messagesBase) add(warn('messages', 'not checked: no base address serves /v1/messages (see above)'));
      else add(await checkMessages(prober, messagesBase, plan.enhance));
    } else {
      add(ok('messages', 'not needed: the job has no enhance: block, so it makes no Messages calls'));
    }
    if (!key.key) add(warn('models', `not checked: ${key.env} is not set`));
    else for (const c of await checkModels(plan, use)) add(c);
  } finally {
    await prober.close();
  }
}

/**
 * The estimate, with the prices the gateway publishes beneath the job's own (docs/costs.md). A budget
 * with an unpriced model fails as `run` would refuse it; some items unpriced is a warning.
 */
async function estimateCheck(plan: Plan, key: KeyInfo, findings: Findings): Promise<Check> {
  const name = 'cost';
  const { note } = await addGatewayPrices(plan, key.key);
  const estimate = estimatePlan(plan);
  Object.assign(findings, {
    estimate,
    gatewayPrices: note,
    ...(plan.budget ? { budget: { max_usd: plan.budget.maxUsd } } : {}),
  });
  const detail = [...estimateLines(estimate, plan.budget), ...gatewayPricesLines(note)].join('\n    ');
  const unpriced = plan.budget ? unpricedModels(plan) : [];
  if (unpriced.length > 0) return fail(name, `${detail}\n    run refuses it: ${unpricedMessage(unpriced)}`, 'usage');
  const priced = estimate.per_model.some((m) => m.priced_items > 0);
  return priced && estimate.unpriced_items > 0 ? warn(name, detail) : ok(name, detail);
}

async function storageCheck(plan: Plan): Promise<Check> {
  const storage = openStorage(plan.output);
  const where = plan.output.storage === 's3' ? `bucket ${plan.output.s3?.bucket ?? ''}` : `directory ${plan.output.dir ?? ''}`;
  try {
    await withTimeout(PROBE_TIMEOUT_MS * 2, storage.checkWritable());
    return ok('output', `${where} is writable`);
  } catch (error) {
    const hint =
      plan.output.storage === 's3'
        ? 'check the bucket, the endpoint and the AWS credentials in the environment'
        : 'choose another output.dir, or fix the permissions';
    return fail('output', `${(error as Error).message}: ${hint}`);
  }
}
