// CPU a worker spends per item deciding that GATEWAY_API_KEY may go to the user's own loopback
// gateway (gateway/key-route.ts). The worker applies the key rule before every gateway call: four
// per item in a 2,000-item job of instant renders (create, two status checks, download; counted in
// the scale e2e). Before, each application read /proc/net/tcp and tcp6 to find who listens, and
// each read costs about a millisecond of kernel time however few sockets there are (the kernel walks
// its whole connection hash). Now the listener found to be the user's is remembered, and every
// connection is checked instead. The baseline, in the same run, is that same rule application plus
// the socket-table lookup each one made before (`loopbackListener`, unchanged). CPU is user + system
// time of this process (the table walk is system time). Last line: one JSON figure.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keyRouteRefusals, loopbackListener } from '../gateway/key-route';
import { emit, fail, intFlags, machineLine, say } from './lib/report';

const RULE_CHECKS_PER_ITEM = 4;
const SETTINGS_FILE = '/nonexistent/keys.yaml';

function cpuMicros(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

/** CPU µs per item of `check`, applied RULE_CHECKS_PER_ITEM times per item. */
function perItem(items: number, check: () => void): number {
  const start = process.cpuUsage();
  for (let i = 0; i < items * RULE_CHECKS_PER_ITEM; i += 1) check();
  return cpuMicros(start) / items;
}

async function main(): Promise<void> {
  const { items, rounds } = intFlags({ items: 300, rounds: 3 }, 100_000);
  say(machineLine());
  const server: Server = createServer((_req, res) => res.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const apply = () => {
      if (keyRouteRefusals('GATEWAY_API_KEY', [origin], [], SETTINGS_FILE).length > 0) throw new Error(`${origin} was refused`);
    };
    const applyAsBefore = () => {
      if (loopbackListener(origin).kind !== 'own') throw new Error(`${origin} is not this user's listener`);
      apply();
    };
    apply(); // the first application finds the listener, as a worker's first gateway call does
    const before: number[] = [];
    const after: number[] = [];
    // Alternating rounds: a change in the machine's load falls on both sides alike.
    for (let round = 0; round < rounds; round += 1) {
      before.push(perItem(items, applyAsBefore));
      after.push(perItem(items, apply));
      say(`round ${round + 1}: before ${before.at(-1)!.toFixed(0)} µs CPU per item, now ${after.at(-1)!.toFixed(1)} µs`);
    }
    const best = (values: number[]) => Math.min(...values);
    const value = best(after);
    const baseline = best(before);
    say(`key rule, ${RULE_CHECKS_PER_ITEM} applications per item, ${items} items per round, best of ${rounds} rounds`);
    say(`before (socket tables read at every application): ${baseline.toFixed(0)} µs CPU per item`);
    say(`now (listener remembered, every connection checked): ${value.toFixed(1)} µs CPU per item`);
    emit({
      figure: 'key_rule_cpu_per_item',
      value,
      unit: 'µs',
      baseline,
      ratio: value / baseline,
      target: '< 0.1 x the socket-table read at every call',
      meets: value < baseline * 0.1,
      items,
      rounds,
      checksPerItem: RULE_CHECKS_PER_ITEM,
    });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

main().catch(fail);
