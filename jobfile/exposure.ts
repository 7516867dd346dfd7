// Warnings about where a job file sends the gateway key: the value of the variable it names goes to
// every base address. Whether it may is the user's key rule (jobfile/key-rule.ts, docs/keys.md),
// which `run` and every worker enforce and `validate` reports; here, at the job file's own
// positions: a variable that is never sent, and plain http off loopback (not an error: a lab
// gateway on plain http inside a private network is common, but the user should have decided it).
import type { Ctx } from './context';
import { warn } from './context';
import { isLoopbackHost, neverSentReason } from './key-rule';
import type { JobFileData } from './schema';

export function warnAboutKeyExposure(data: JobFileData, ctx: Ctx): void {
  const variable = data.gateway.api_key_env;
  const never = neverSentReason(variable);
  if (never) {
    warn(
      ctx,
      ['gateway', 'api_key_env'],
      `gateway.api_key_env names ${variable}, which is never sent as a gateway key (${never}): run refuses the job. ` +
        "Use a variable of the gateway's own, such as GATEWAY_API_KEY (docs/keys.md)",
    );
  }
  data.gateway.base_urls.forEach((url, i) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return; // the schema has reported it
    }
    if (parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname)) {
      warn(
        ctx,
        ['gateway', 'base_urls', i],
        `${url} is plain http on a host that is not loopback: the key and every prompt cross the network unencrypted; use https://`,
      );
    }
  });
}
