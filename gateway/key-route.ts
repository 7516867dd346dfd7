// The one place that decides whether a job's key may go to its gateway origins (docs/keys.md): the
// user's rule (jobfile/key-rule.ts) with, for GATEWAY_API_KEY to a loopback origin, who listens
// there (gateway/listener-owner.ts). `run`, `validate`, `doctor`, `enhance`, `schedule` (client/keys.ts)
// and every worker's gateway activities (activities/context.ts) ask it before anything is sent.
//
// A check made before the requests proves nothing about the connections made later: the user's
// gateway may restart, and another user may take its port in between. So every origin the key goes
// to because it is the user's own loopback listener is remembered for the life of the process, and
// every connection any transport of this process makes to it is checked once made, before a byte
// is sent (`checkConnection`, called by gateway/http.ts): the program at its other end must be the
// user's. That also settles where `localhost` went: the connection's own addresses are checked.
//
// Because every connection is checked, the listener found to be the user's is not looked up again
// each time the rule is applied (a worker applies it before every gateway call; reading the socket
// tables costs milliseconds, the kernel walks its whole connection hash). A connection refused for
// its owner forgets that finding, so the rule's next application looks again and refuses by name.
import { GatewayKeyWithheldError } from './errors';
import { describeUid, listenerOwners, ownUid, peerOwner } from './listener-owner';
import { isLoopbackHost, keyRefusals, originOf, type KeyAllowance, type KeyRefusal, type LoopbackListener } from '../jobfile/key-rule';

/** Origins the key goes to as the user's own listener, with the pair that would allow another's. */
const ownListenerOrigins = new Map<string, { variable: string; settingsFile: string }>();
/** Origins whose listener the socket tables showed to be the user's, until a connection says otherwise. */
const foundOwnListener = new Set<string>();

/** The loopback addresses a host stands for: itself, or both loopback addresses for `localhost`. */
function loopbackAddresses(hostname: string): string[] {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' ? ['127.0.0.1', '::1'] : [host];
}

/** Who listens on a loopback origin, from the socket tables. */
export function loopbackListener(origin: string): LoopbackListener {
  const url = new URL(origin);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const uid = ownUid();
  if (uid === undefined) return { kind: 'unverifiable', why: 'this system has no user ids' };
  const found = listenerOwners(loopbackAddresses(url.hostname), port);
  if ('unverifiable' in found) return { kind: 'unverifiable', why: found.unverifiable };
  const other = found.uids.find((owner) => owner !== uid);
  return other === undefined ? { kind: 'own' } : { kind: 'other', owner: describeUid(other), you: describeUid(uid) };
}

/**
 * Where the job would send `variable`'s value and the user has not allowed it, one refusal per
 * origin. The origins it may go to as the user's own loopback listener are remembered: every
 * connection to them is checked when it is made.
 */
export function keyRouteRefusals(
  variable: string,
  baseUrls: readonly string[],
  allowances: readonly KeyAllowance[],
  settingsFile: string,
): KeyRefusal[] {
  const checked = new Set<string>();
  const refusals = keyRefusals(variable, baseUrls, allowances, settingsFile, (origin) => {
    checked.add(origin);
    if (foundOwnListener.has(origin)) return { kind: 'own' };
    const listener = loopbackListener(origin);
    if (listener.kind === 'own') foundOwnListener.add(origin);
    return listener;
  });
  const refused = new Set(refusals.map((r) => r.origin));
  for (const url of baseUrls) {
    const origin = originOf(url);
    if (origin === undefined || refused.has(origin)) continue;
    // A pair the user wrote lifts the owner check: they chose that origin, whoever listens there.
    if (checked.has(origin)) ownListenerOrigins.set(origin, { variable, settingsFile });
    else ownListenerOrigins.delete(origin);
  }
  return refusals;
}

/** The ends of a connection just made, as net.Socket gives them. */
export interface ConnectionEnds {
  localAddress?: string;
  localPort?: number;
  remoteAddress?: string;
  remotePort?: number;
}

const PEER_LOOKUPS = 20;
const PEER_LOOKUP_WAIT_MS = 5;

/**
 * Resolves when a connection to `origin` may carry a request: always, unless the key goes there as
 * the user's own loopback listener; then the socket at the other end must be a loopback socket of
 * the user's. Rejects with GatewayKeyWithheldError (nothing was sent).
 */
export async function checkConnection(origin: string, ends: ConnectionEnds): Promise<void> {
  const pair = ownListenerOrigins.get(origin);
  if (!pair) return;
  const withheld = (why: string): GatewayKeyWithheldError => {
    foundOwnListener.delete(origin);
    return new GatewayKeyWithheldError(
      `${pair.variable} was not sent to ${origin}: ${why}. If ${origin} is the gateway you mean, allow it with ` +
        `--allow-key ${pair.variable}@${origin}, or by listing ${origin} under ${pair.variable} in ${pair.settingsFile} (docs/keys.md)`,
      { baseUrl: origin },
    );
  };
  const { localAddress, localPort, remoteAddress, remotePort } = ends;
  if (!localAddress || !localPort || !remoteAddress || !remotePort) throw withheld('the connection has no addresses to check');
  if (!isLoopbackHost(remoteAddress.replace(/^::ffff:/i, ''))) {
    throw withheld(`${new URL(origin).hostname} led to ${remoteAddress}, which is not a loopback address`);
  }
  const uid = ownUid();
  if (uid === undefined) throw withheld('this system has no user ids to tell whose program listens');
  for (let lookup = 0; ; lookup++) {
    const owner = peerOwner({ address: localAddress, port: localPort }, { address: remoteAddress, port: remotePort });
    if (owner.kind === 'unverifiable') throw withheld(`reelflow cannot tell who listens there: ${owner.why}`);
    if (owner.kind === 'uid') {
      if (owner.uid === uid) return;
      throw withheld(
        `the program listening there is not yours: that port belongs to ${describeUid(owner.uid)}, and you are ${describeUid(uid)}`,
      );
    }
    // The kernel lists the accepted end as the handshake completes; on loopback that is at once,
    // but a busy machine may take a moment.
    if (lookup + 1 >= PEER_LOOKUPS) throw withheld('the other end of the connection is not in the socket table');
    await new Promise((resolve) => setTimeout(resolve, PEER_LOOKUP_WAIT_MS));
  }
}
