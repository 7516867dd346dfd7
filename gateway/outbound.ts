// Where a worker may be sent by a gateway: result_urls, redirects and remote references are
// addresses a gateway (or a job file) chose. A hostile one could point a worker at a cloud metadata
// service (169.254.169.254) or an internal host and have it store or upload what comes back. Such
// targets are refused unless the gateway itself lives on a private network or the job allows them.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv6');

/** Whether an IP address is loopback, private, link-local, shared, multicast or unspecified. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return PRIVATE.check(mapped, 'ipv4');
  const family = isIP(address);
  return family === 4 ? PRIVATE.check(address, 'ipv4') : family === 6 ? PRIVATE.check(address, 'ipv6') : false;
}

/** A base address's host is on a private network when it is such an address literally, or localhost. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || isPrivateAddress(host);
}

/**
 * Why `url` may not be fetched, or undefined. Its host is resolved here and every address checked;
 * the connection resolves it again, so a name that changes its answer in between (DNS rebinding)
 * is not caught: set gateway.allow_private_targets: false only as one line of defence.
 */
export async function privateTargetProblem(url: URL): Promise<string | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host)
    ? [host]
    : await lookup(host, { all: true }).then(
        (all) => all.map((a) => a.address),
        () => [],
      );
  const blocked = addresses.find(isPrivateAddress);
  if (blocked === undefined) return undefined;
  return (
    `${url.origin} is ${blocked === host ? 'a' : `${host}, which resolves to ${blocked}, a`} private, loopback or link-local address; ` +
    'reelflow fetches such addresses only for a gateway on a private network, or with gateway.allow_private_targets: true'
  );
}
