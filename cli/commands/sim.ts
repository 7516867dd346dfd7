// `reelflow sim`: runs the gateway simulator in the foreground until SIGINT/SIGTERM.
import { Command, InvalidArgumentError, Option } from 'commander';
import type { PortMode } from '../../sim/contract';
import {
  DEFAULT_CATALOG,
  DEFAULT_KEY,
  isProfile,
  NEW_API_SERVER_ADDRESS,
  parseDuration,
  PROFILES,
  parseRate,
  parseRenderTime,
  parseSize,
  startSimulator,
  type SimFaultsExt,
  type SimOptionsExt,
  type SimProfile,
} from '../../sim/index';

interface SimFlags {
  profile: SimProfile;
  serverAddress?: string;
  refresh?: number;
  fetchGuardPort?: number;
  litellmDatabase?: boolean;
  port?: number[];
  host: string;
  key?: string[];
  models?: string[];
  renderTime?: number | [number, number];
  videoSize?: number;
  failRate?: number;
  rateLimitRate?: number;
  errorRate?: number;
  resetRate?: number;
  cutDownloadRate?: number;
  notExistWindow?: number;
  lostCreateRate?: number;
  streamErrorRate?: number;
  slow?: number;
  callbackLostRate?: number;
  callbackLateRate?: number;
  callbackLate?: number;
  callbackDuplicateRate?: number;
  callbackForgedRate?: number;
  callbackOutOfOrderRate?: number;
  cdn?: boolean;
  cdnPort?: number;
  cdnTtl?: number;
  contentRedirect?: boolean;
  modelNotFound503?: boolean;
  portMode?: Array<[number, PortMode]>;
  group?: string;
  seed: number;
}

/** Commander reports InvalidArgumentError as a usage error (exit 1 with the flag named), not a crash. */
function arg<T>(parse: (s: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value);
    } catch (e) {
      throw new InvalidArgumentError((e as Error).message);
    }
  };
}

function int(text: string): number {
  if (!/^\d+$/.test(text)) throw new Error(`not a whole number: ${JSON.stringify(text)}`);
  return Number(text);
}

function portMode(text: string): [number, PortMode] {
  const m = /^(\d+)=(up|refuse|502|503|hang)$/.exec(text);
  if (!m) throw new Error(`expected INDEX=MODE with MODE one of up, refuse, 502, 503, hang; got ${JSON.stringify(text)}`);
  return [Number(m[1]), m[2] as PortMode];
}

function profile(text: string): SimProfile {
  if (!isProfile(text)) throw new Error(`expected one of ${PROFILES.join(', ')}; got ${JSON.stringify(text)}`);
  return text;
}

function httpAddress(text: string): string {
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`not an http(s) address: ${JSON.stringify(text)}`);
  return text.replace(/\/+$/, '');
}

/** The port `reelflow sim` listens on without --port (the README's and docs' examples use it). */
const DEFAULT_PORT = 8787;

const rate = (flag: string, what: string): Option =>
  new Option(`${flag} <share>`, `${what} (0..1 or a percentage)`).argParser(arg(parseRate));

export function registerSimCommand(program: Command): void {
  const cmd = new Command('sim')
    .description(
      'Run the gateway simulator (both video protocols and Messages, with faults) until interrupted. ' +
        'Each --port is an alternate base address onto the same tasks. Control it at run time with ' +
        'POST /__sim/faults and read counters at GET /__sim/stats (both with the key, like every route).',
    )
    .addOption(
      new Option(
        '--port <n>',
        `port to listen on; repeat for alternate base addresses (0 = any free port) (default: ${DEFAULT_PORT})`,
      ).argParser((v: string, prev: number[] | undefined) => [...(prev ?? []), arg(int)(v)]),
    )
    .addOption(
      new Option(
        '--profile <gateway>',
        'imitate a real gateway as observed (test/gateways/OBSERVED.md): litellm (LiteLLM proxy 1.106: videos protocol ' +
          'and Messages only, long base64 ids, its error shapes), new-api (15 s refresh, result_url on ServerAddress, Range ' +
          'ignored on content), new-api-0.10 (as new-api, with v0.10.0 shapes: task_id create answer, address in fail_reason, ' +
          'failure reason in data.data.error)',
      )
        .choices([...PROFILES])
        .argParser(arg(profile))
        .default('default'),
    )
    .addOption(
      new Option(
        '--server-address <url>',
        `new-api profiles: the ServerAddress setting named in result_urls (default: ${NEW_API_SERVER_ADDRESS})`,
      ).argParser(arg(httpAddress)),
    )
    .addOption(
      new Option(
        '--refresh <time>',
        'read tasks from the upstream only every <time> (e.g. 15s); default 15s for new-api profiles, else live',
      ).argParser(arg(parseDuration)),
    )
    .addOption(
      new Option(
        '--fetch-guard-port <n>',
        "new-api profiles: the content endpoint answers the fetch guard's 403 'request blocked: port N is not allowed'",
      ).argParser(arg(int)),
    )
    .addOption(
      new Option(
        '--litellm-database',
        'litellm profile: answer a wrong key 401 as a proxy with a database does (default: 400 no_db_connection)',
      ),
    )
    .addOption(new Option('--host <addr>', 'address to bind; anything but loopback warns').default('127.0.0.1'))
    .addOption(
      new Option('--key <key>', 'accepted API key; repeatable (default: $GATEWAY_API_KEY, else sk-sim-local)').argParser(
        (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
      ),
    )
    .addOption(
      new Option('--models <a,b,...>', `catalog of the key's token group (default: ${Object.keys(DEFAULT_CATALOG).join(', ')})`).argParser(
        (v: string) =>
          v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
      ),
    )
    .addOption(new Option('--group <name>', 'token group name shown in catalog errors').default('reelflow'))
    .addOption(
      new Option('--render-time <time>', 'render time, fixed (5s) or a range (20s..90s); default per model').argParser(
        arg(parseRenderTime),
      ),
    )
    .addOption(
      new Option('--video-size <size>', 'size of served videos, real MP4 padded with a free box (e.g. 1MB, 1GiB)').argParser(
        arg(parseSize),
      ),
    )
    .addOption(rate('--fail-rate', 'share of renders that end FAILURE with a reason'))
    .addOption(rate('--rate-limit-rate', 'share of requests answered 429 (Retry-After seconds, HTTP-date, none, empty body)'))
    .addOption(rate('--error-rate', 'share of requests answered 500/502/503/504 (JSON or HTML bodies)'))
    .addOption(rate('--reset-rate', 'share of requests whose connection is reset (before or after the request is read)'))
    .addOption(rate('--cut-download-rate', 'share of downloads cut mid-body'))
    .addOption(rate('--lost-create-rate', 'share of creates processed but whose response is lost'))
    .addOption(rate('--stream-error-rate', 'share of Messages streams ending in an error event after the 200'))
    .addOption(
      new Option('--not-exist-window <time>', 'retrieve answers 400 task_not_exist for this long after creation (e.g. 3s)').argParser(
        arg(parseDuration),
      ),
    )
    // Provider callbacks to a create's metadata.callback_url (docs/callbacks.md, "In the simulator").
    .addOption(rate('--callback-lost-rate', "share of tasks whose final callback is never sent (the 'running' one still is)"))
    .addOption(rate('--callback-late-rate', 'share of tasks whose final callback comes --callback-late after the task ended'))
    .addOption(new Option('--callback-late <time>', 'how late a late callback comes (default 2s)').argParser(arg(parseDuration)))
    .addOption(rate('--callback-duplicate-rate', 'share of tasks whose final callback is sent three times'))
    .addOption(
      rate('--callback-forged-rate', 'share of tasks that also get a forged callback (a token no worker minted) claiming success half-way'),
    )
    .addOption(rate('--callback-out-of-order-rate', "share of tasks whose 'running' callback comes after the final one"))
    .addOption(new Option('--slow <time>', 'extra latency added to every response (e.g. 200ms)').argParser(arg(parseDuration)))
    .addOption(
      new Option(
        '--cdn',
        'serve result_url from a separate CDN listener that refuses Authorization and expires URLs (new-api profiles: on, as the Seedance upstream file host)',
      ),
    )
    .addOption(new Option('--no-cdn', 'no CDN listener, also for new-api profiles'))
    .addOption(new Option('--cdn-port <n>', 'port of the CDN listener (default: any free port)').argParser(arg(int)))
    .addOption(new Option('--cdn-ttl <time>', 'lifetime of signed CDN URLs (e.g. 10m); default 1h').argParser(arg(parseDuration)))
    .addOption(new Option('--content-redirect', 'with --cdn: /v1/videos/{id}/content answers 302 to the CDN'))
    .addOption(new Option('--model-not-found-503', "answer unknown models with the real gateway's 503 model_not_found instead of 404"))
    .addOption(
      new Option('--port-mode <index=mode>', 'start port INDEX (0-based) as up, refuse, 502, 503 or hang; repeatable').argParser(
        (v: string, prev: Array<[number, PortMode]> | undefined) => [...(prev ?? []), arg(portMode)(v)],
      ),
    )
    .addOption(new Option('--seed <n>', 'seed for faults and render times (same seed, same run)').argParser(arg(int)).default(1))
    .action(async (flags: SimFlags) => {
      await runSim(flags);
    });
  program.addCommand(cmd);
}

function optionsFrom(f: SimFlags): SimOptionsExt {
  const envKey = process.env['GATEWAY_API_KEY'];
  const ports = f.port ?? [DEFAULT_PORT];
  const keys = f.key ?? [];
  const faults: SimFaultsExt = {
    failRate: f.failRate,
    rateLimitRate: f.rateLimitRate,
    errorRate: f.errorRate,
    resetRate: f.resetRate,
    cutDownloadRate: f.cutDownloadRate,
    notExistWindowMs: f.notExistWindow,
    lostCreateRate: f.lostCreateRate,
    streamErrorRate: f.streamErrorRate,
    slowMs: f.slow,
    callbackLostRate: f.callbackLostRate,
    callbackLateRate: f.callbackLateRate,
    callbackLateMs: f.callbackLate,
    callbackDuplicateRate: f.callbackDuplicateRate,
    callbackForgedRate: f.callbackForgedRate,
    callbackOutOfOrderRate: f.callbackOutOfOrderRate,
    modelNotFoundAs503: f.modelNotFound503 ?? false,
    fetchGuardPort: f.fetchGuardPort,
  };
  const portModes: PortMode[] = ports.map(() => 'up');
  for (const [i, mode] of f.portMode ?? []) {
    if (i >= ports.length) throw new InvalidArgumentError(`--port-mode ${i}=${mode}: there are only ${ports.length} ports`);
    portModes[i] = mode;
  }
  return {
    profile: f.profile,
    serverAddress: f.serverAddress,
    refreshMs: f.refresh,
    litellmDatabase: f.litellmDatabase ?? false,
    ports,
    host: f.host,
    keys: keys.length > 0 ? keys : [envKey && envKey !== '' ? envKey : DEFAULT_KEY],
    models: f.models,
    group: f.group,
    renderMs: f.renderTime,
    videoBytes: f.videoSize,
    cdn: f.cdn,
    cdnPort: f.cdnPort,
    cdnUrlTtlMs: f.cdnTtl,
    contentRedirect: f.contentRedirect ?? false,
    faults,
    portModes,
    seed: f.seed,
    // From the environment, never a flag: a flag's value shows in every process list.
    ...(process.env['REELFLOW_SIM_EVENT_SECRET'] ? { eventSecret: process.env['REELFLOW_SIM_EVENT_SECRET'] } : {}),
  };
}

/** True for an address only this machine reaches: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

async function runSim(flags: SimFlags): Promise<void> {
  const opts = optionsFrom(flags);
  if (!isLoopbackHost(flags.host)) {
    // Before listening, so that it is said even when the bind then fails.
    process.stderr.write(
      `sim: warning: --host ${flags.host} is not a loopback address: whoever can reach it and knows the key can create tasks, ` +
        'read every prompt (/__sim/stats) and switch faults; the simulator is for tests on this machine\n',
    );
  }
  const sim = await startSimulator(opts);
  const keySource = (flags.key ?? []).length > 0 ? '--key' : process.env['GATEWAY_API_KEY'] ? '$GATEWAY_API_KEY' : 'the default key';
  // The key itself is never printed: only where it came from.
  for (const [i, url] of sim.urls.entries()) {
    const mode = opts.portModes?.[i] ?? 'up';
    process.stdout.write(`sim: listening on ${url}${mode === 'up' ? '' : ` (mode ${mode})`}\n`);
  }
  if (sim.cdnUrl) process.stdout.write(`sim: cdn on ${sim.cdnUrl}\n`);
  if (opts.eventSecret)
    process.stdout.write(`sim: receiving signed job events at ${sim.urls[0]}/__sim/events/<name> (docs/notifications.md)\n`);
  if (sim.profile !== 'default') process.stdout.write(`sim: imitating ${sim.profile}\n`);
  process.stdout.write(
    `sim: accepting ${opts.keys?.length ?? 1} key(s) from ${keySource}; ` +
      `videos ${sim.ffmpeg ? 'rendered by ffmpeg' : 'from the shipped sample (no ffmpeg)'}; Ctrl-C to stop\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sim.close();
  process.stdout.write('sim: stopped\n');
}
