// `--metrics HOST:PORT`: where a worker serves Prometheus metrics. The SDK's exporter binds an IP
// address and a port, so HOST is an IP address (0.0.0.0 or [::] for every interface, as a fleet
// behind a scraper needs) or `localhost`; a port of 0 is refused, since no one could find it.
import { isIPv4, isIPv6 } from 'node:net';
import { MetricsAddressError } from './errors';

export interface MetricsAddress {
  /** What the SDK's exporter binds: `127.0.0.1:9464`, `[::1]:9464`. */
  bindAddress: string;
  host: string;
  port: number;
  /** Where it listens, for people: the scrape address, and which interfaces. */
  description: string;
}

const USAGE = 'use HOST:PORT, e.g. 127.0.0.1:9464, or 0.0.0.0:9464 to be scraped from other machines';

export function parseMetricsAddress(value: string): MetricsAddress {
  const text = value.trim();
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  const bad = (why: string): never => {
    throw new MetricsAddressError(`--metrics "${value}": ${why}; ${USAGE}`);
  };
  if (!match) {
    const unbracketed = /^[0-9a-f:.]+$/i.test(text) && text.split(':').length > 2;
    return bad(unbracketed ? 'an IPv6 address goes in brackets, e.g. [::1]:9464' : 'not HOST:PORT');
  }
  const [, v6, name = '', portText = ''] = match;
  const port = Number(portText);
  if (port < 1 || port > 65_535) return bad(`port ${portText} is not between 1 and 65535`);
  if (v6 !== undefined && !isIPv6(v6)) return bad(`[${v6}] is not an IPv6 address`);
  const host = v6 ?? (name.toLowerCase() === 'localhost' ? '127.0.0.1' : name);
  if (v6 === undefined && !isIPv4(host)) return bad(`"${name}" is not an IP address (a host name cannot be bound; give the address)`);
  const bindAddress = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const everywhere = host === '0.0.0.0' || host === '::';
  // A wildcard address is scraped, on this machine, through loopback.
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  const url = `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}/metrics`;
  return {
    bindAddress,
    host,
    port,
    description: everywhere ? `${bindAddress} on every interface (here: ${url})` : url,
  };
}
