// Who owns a loopback socket, from the kernel's socket tables (/proc/net/tcp and tcp6 on Linux).
// Any user of a machine can listen on a loopback port, so "loopback" says nothing about whose
// program answers; the table's `uid` column does. Two questions are asked of it:
//   - who listens on a loopback address and port (rows in state 0A, LISTEN, on that address or the
//     wildcard 0.0.0.0 / ::): asked when a job's key rule is applied;
//   - who holds the other end of a connection just made (the row whose local end is our remote end
//     and whose remote end is our local end): asked of every connection before a byte is sent on it.
//     An accepted socket carries the uid of the listener that accepted it, so this names the program
//     that will read the request, whatever a name resolved to and whoever listens by then.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { endianness } from 'node:os';

const TABLES = ['/proc/net/tcp', '/proc/net/tcp6'] as const;
const LISTEN = '0A';

/** What the socket tables say about a loopback address and port, or a connection's other end. */
export type SocketOwner = { kind: 'uid'; uid: number } | { kind: 'none' } | { kind: 'unverifiable'; why: string };

/** One row of a socket table: both ends as the table writes them (hex address:port) and the owner. */
export interface SocketRow {
  local: string;
  remote: string;
  state: string;
  uid: number;
}

/** The rows of /proc/net/tcp or tcp6 text (header skipped, malformed lines ignored). */
export function parseSocketTable(text: string): SocketRow[] {
  const rows: SocketRow[] = [];
  for (const line of text.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8) continue;
    const uid = Number(fields[7]);
    if (!Number.isInteger(uid)) continue;
    rows.push({ local: fields[1]!.toUpperCase(), remote: fields[2]!.toUpperCase(), state: fields[3]!.toUpperCase(), uid });
  }
  return rows;
}

/**
 * An address and port as the socket table writes them: the address in 32-bit words of host byte
 * order (127.0.0.1 is 0100007F on x86), the port in big-endian hex. IPv4 addresses are also given
 * as IPv4-mapped IPv6 (a dual-stack socket's view).
 */
export function tableEndpoints(address: string, port: number, littleEndian = endianness() === 'LE'): string[] {
  const bytes = addressBytes(address);
  if (!bytes) return [];
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const forms = [bytes];
  if (bytes.length === 4) forms.push([...Array<number>(10).fill(0), 0xff, 0xff, ...bytes]);
  return forms.map((form) => `${words(form, littleEndian)}:${hexPort}`);
}

function words(bytes: number[], littleEndian: boolean): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 4) {
    const word = bytes.slice(i, i + 4);
    if (littleEndian) word.reverse();
    out += word.map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join('');
  }
  return out;
}

function addressBytes(address: string): number[] | undefined {
  const host = address.replace(/^\[|\]$/g, '');
  if (isIP(host) === 4) return host.split('.').map(Number);
  if (isIP(host) !== 6) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(host)?.[1];
  if (mapped) return [...Array<number>(10).fill(0), 0xff, 0xff, ...mapped.split('.').map(Number)];
  const [head, tail] = host.includes('::') ? host.split('::') : [host, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const groups = [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
}

const NO_TABLES = 'this system has no /proc/net/tcp, where Linux shows who owns a socket';

/**
 * The rows of each socket table, read only when asked for: each read costs about a millisecond,
 * however few rows there are (the kernel walks its whole connection hash), so a search that finds
 * its row in /proc/net/tcp does not read tcp6. Undefined for a table this system does not have.
 */
function* tables(): Generator<SocketRow[] | undefined> {
  for (const table of TABLES) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      yield undefined;
      continue;
    }
    yield parseSocketTable(text);
  }
}

/** Who listens on `port` of the loopback `addresses`: one owner, several (each named), or none. */
export function listenerOwners(addresses: readonly string[], port: number): { uids: number[] } | { unverifiable: string } {
  const wanted = new Set([...addresses, '0.0.0.0', '::'].flatMap((a) => tableEndpoints(a, port)));
  const uids = new Set<number>();
  let found = 0;
  // Both tables: a listener on either may take the connection.
  for (const rows of tables()) {
    if (!rows) continue;
    found += 1;
    for (const row of rows) if (row.state === LISTEN && wanted.has(row.local)) uids.add(row.uid);
  }
  return found > 0 ? { uids: [...uids] } : { unverifiable: NO_TABLES };
}

/** The owner of the socket at the other end of a connection from `local` to `remote` on this machine. */
export function peerOwner(local: { address: string; port: number }, remote: { address: string; port: number }): SocketOwner {
  const theirs = new Set(tableEndpoints(remote.address, remote.port));
  const ours = new Set(tableEndpoints(local.address, local.port));
  let found = 0;
  // The accepted end is in the table of its listener's family: tcp for an IPv4 listener, tcp6 for
  // an IPv6 or dual-stack one. A connection has exactly one such row.
  for (const rows of tables()) {
    if (!rows) continue;
    found += 1;
    const row = rows.find((r) => r.state !== LISTEN && theirs.has(r.local) && ours.has(r.remote));
    if (row) return { kind: 'uid', uid: row.uid };
  }
  return found > 0 ? { kind: 'none' } : { kind: 'unverifiable', why: NO_TABLES };
}

/** This process's user id, or undefined where there is none (Windows). */
export function ownUid(): number | undefined {
  return typeof process.getuid === 'function' ? process.getuid() : undefined;
}

/** `uid 65534 (nobody)`: the user name from /etc/passwd when it has one. */
export function describeUid(uid: number): string {
  let name: string | undefined;
  try {
    name = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .map((line) => line.split(':'))
      .find((fields) => fields[2] === String(uid))?.[0];
  } catch {
    // No user database: the number alone.
  }
  return name ? `uid ${uid} (${name})` : `uid ${uid}`;
}
