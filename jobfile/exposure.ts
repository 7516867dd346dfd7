// Warnings about where a job file sends the gateway key: the value of the variable it names goes to
// every base address. Neither case is an error (a lab gateway on plain http inside a private
// network is common), but the user should have decided it.
import type { Ctx } from './context';
import { warn } from './context';
import type { JobFileData } from './schema';

/** Variables that hold other services' credentials by convention. */
const OTHER_SERVICE_VARIABLE =
  /^(AWS_|AZURE_|ARM_|GOOGLE_|GCP_|GCLOUD_|GITHUB_|GH_|GITLAB_|NPM_|DOCKER_|SLACK_|STRIPE_|TWILIO_|HEROKU_|VAULT_|SSH_|KUBE|DATABASE_URL|PG|MYSQL_|REDIS_)|SECRET|PASSWORD|PASSWD|PRIVATE/i;

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export function warnAboutKeyExposure(data: JobFileData, ctx: Ctx): void {
  const variable = data.gateway.api_key_env;
  if (OTHER_SERVICE_VARIABLE.test(variable)) {
    warn(
      ctx,
      ['gateway', 'api_key_env'],
      `gateway.api_key_env names ${variable}, which looks like another service's credential: ` +
        "its value is sent to the gateway as the key. Use a variable of the gateway's own, such as GATEWAY_API_KEY",
    );
  }
  data.gateway.base_urls.forEach((url, i) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return; // the schema has reported it
    }
    if (parsed.protocol === 'http:' && !isLoopback(parsed.hostname)) {
      warn(
        ctx,
        ['gateway', 'base_urls', i],
        `${url} is plain http on a host that is not loopback: the key and every prompt cross the network unencrypted; use https://`,
      );
    }
  });
}
