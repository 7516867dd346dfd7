// Which environment variable a job may send as its gateway key, and to which gateway origins
// (docs/keys.md). A job file is data a user may have been handed, and it names both the variable
// (gateway.api_key_env) and the hosts (gateway.base_urls): so the user decides, not the job.
//
// - TEMPORAL_* and AWS_* are never sent: reelflow's own cluster and storage credentials.
// - GATEWAY_API_KEY may go to a loopback gateway (a local LiteLLM, the simulator) unasked.
// - Anything else (another variable, or any non-loopback origin) needs an allowance: a pair
//   VARIABLE -> origin in the user's key settings file or from `--allow-key VARIABLE@ORIGIN`.
// Pure: the settings file is read by jobfile/key-settings.ts, the rule applied by `run`,
// `validate` and every worker's activities (activities/context.ts).

export const DEFAULT_KEY_VARIABLE = 'GATEWAY_API_KEY';

/** One permission: the value of `variable` may be sent to `origin` (scheme://host[:port]). */
export interface KeyAllowance {
  variable: string;
  origin: string;
}

export interface KeyRefusal {
  variable: string;
  /** The origin the job would send to (the URL as written when it has none). */
  origin: string;
  /** True when no allowance can lift it. */
  never: boolean;
  message: string;
}

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why a variable is never sent as a gateway key, or undefined. */
export function neverSentReason(variable: string): string | undefined {
  const upper = variable.toUpperCase();
  if (upper.startsWith('TEMPORAL_')) return "it holds reelflow's own Temporal cluster credentials";
  if (upper.startsWith('AWS_')) return 'it holds AWS credentials (reelflow uses them for S3 storage)';
  return undefined;
}

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** scheme://host[:port] of an http(s) URL (default ports dropped, host lower-cased), or undefined. */
export function originOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
    return parsed.origin;
  } catch {
    return undefined;
  }
}

/** `VARIABLE@ORIGIN` (the form of --allow-key) -> an allowance; a string says what is wrong. */
export function parseAllowKey(spec: string): KeyAllowance | string {
  const at = spec.indexOf('@');
  const variable = at > 0 ? spec.slice(0, at) : '';
  const origin = at > 0 ? originOf(spec.slice(at + 1)) : undefined;
  if (!VARIABLE_NAME.test(variable) || !origin) {
    return `--allow-key ${spec}: expected VARIABLE@ORIGIN, for example GATEWAY_API_KEY@https://gateway.example.com`;
  }
  return { variable, origin };
}

/** Where the job would send `variable`'s value and is not allowed to, one refusal per origin. */
export function keyRefusals(
  variable: string,
  baseUrls: readonly string[],
  allowances: readonly KeyAllowance[],
  settingsFile: string,
): KeyRefusal[] {
  const refusals: KeyRefusal[] = [];
  const seen = new Set<string>();
  for (const url of baseUrls) {
    const origin = originOf(url) ?? url;
    if (seen.has(origin)) continue;
    seen.add(origin);
    const never = neverSentReason(variable);
    if (never) {
      refusals.push({
        variable,
        origin,
        never: true,
        message:
          `the job asks to send $${variable} to ${origin} as its gateway key: ${variable} is never sent, because ${never}. ` +
          `Put the gateway's key in a variable of its own (GATEWAY_API_KEY) and name it in gateway.api_key_env (docs/keys.md)`,
      });
      continue;
    }
    const loopback = originOf(url) !== undefined && isLoopbackHost(new URL(url).hostname);
    const allowed =
      (variable === DEFAULT_KEY_VARIABLE && loopback) || allowances.some((a) => a.variable === variable && a.origin === origin);
    if (allowed) continue;
    const why =
      variable === DEFAULT_KEY_VARIABLE
        ? `${origin} is not loopback and not listed for ${variable}`
        : `only ${DEFAULT_KEY_VARIABLE} is sent without your permission, and only to loopback gateways`;
    refusals.push({
      variable,
      origin,
      never: false,
      message:
        `the job asks to send $${variable} to ${origin} as its gateway key, and your key settings do not allow it (${why}). ` +
        `If the job is yours and ${origin} is the gateway that key belongs to, allow it once with ` +
        `--allow-key ${variable}@${origin}, or for good by listing ${origin} under ${variable} in ${settingsFile} (docs/keys.md)`,
    });
  }
  return refusals;
}
