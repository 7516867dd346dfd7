// Which environment variable a job may send as its gateway key, and to which gateway origins
// (docs/keys.md). A job file is data a user may have been handed, and it names both the variable
// (gateway.api_key_env) and the hosts (gateway.base_urls): so the user decides, not the job.
//
// - TEMPORAL_* and AWS_* are never sent: reelflow's own cluster and storage credentials.
// - GATEWAY_API_KEY may go unasked to a loopback gateway of the user's own (a local LiteLLM, the
//   simulator): a literal loopback address or the name `localhost`, where the program listening is
//   the user's. Any user of a machine can listen on a loopback port, so loopback alone is not enough.
// - Anything else (another variable, any other origin, a loopback port another user listens on)
//   needs an allowance: a pair VARIABLE -> origin in the user's key settings file or from
//   `--allow-key VARIABLE@ORIGIN`.
// Pure: the settings file is read by jobfile/key-settings.ts; who listens on a loopback port is
// found by gateway/key-route.ts, the one place the rule is applied (by `run`, `validate`, `doctor`
// and every worker's activities, activities/context.ts).

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

/**
 * A literal loopback address (127.0.0.0/8, ::1) or exactly `localhost`. Not `*.localhost`: the
 * system resolver answers those names, and a search domain or resolver decides where they go.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Who listens on a loopback origin, as gateway/key-route.ts found out from the socket tables. */
export type LoopbackListener =
  /** The user's own program, or nobody yet: every connection is checked again when it is made. */
  | { kind: 'own' }
  /** Another user's program: `owner` and `you` as `uid 65534 (nobody)`. */
  | { kind: 'other'; owner: string; you: string }
  /** No way to tell on this system (no socket table): treated as not the user's. */
  | { kind: 'unverifiable'; why: string };

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

/**
 * Where the job would send `variable`'s value and is not allowed to, one refusal per origin.
 * `listenerAt` is asked only of the origins GATEWAY_API_KEY would go to unasked (loopback, not
 * paired): who listens there decides.
 */
export function keyRefusals(
  variable: string,
  baseUrls: readonly string[],
  allowances: readonly KeyAllowance[],
  settingsFile: string,
  listenerAt: (origin: string) => LoopbackListener,
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
    if (allowances.some((a) => a.variable === variable && a.origin === origin)) continue;
    const loopback = originOf(url) !== undefined && isLoopbackHost(new URL(url).hostname);
    const listener = variable === DEFAULT_KEY_VARIABLE && loopback ? listenerAt(origin) : undefined;
    if (listener?.kind === 'own') continue;
    const why =
      variable !== DEFAULT_KEY_VARIABLE
        ? `only ${DEFAULT_KEY_VARIABLE} is sent without your permission, and only to your own loopback gateways`
        : listener?.kind === 'other'
          ? `the program listening on ${origin} is not yours: that port belongs to ${listener.owner}, and you are ${listener.you}; ` +
            `any user of this machine can listen on a loopback port`
          : listener?.kind === 'unverifiable'
            ? `reelflow cannot tell who listens on ${origin}: ${listener.why}, so a loopback port counts as yours only when you list it`
            : `${origin} is not a loopback address (127.0.0.0/8, ::1 or localhost) and not listed for ${variable}`;
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
