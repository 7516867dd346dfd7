// The token in a callback address (docs/callbacks.md): it names the item's render workflow and
// proves a worker of this fleet minted it. An HMAC-SHA256 under the fleet's callback secret, never
// the gateway key. A token is only a hint's address: a valid one lets a caller make reelflow check
// that item's task through the gateway once more, nothing else.
import { createHmac, timingSafeEqual } from 'node:crypto';

const VERSION = 'v1';
/** Binds the MAC to this use, so the secret's MACs for anything else are no tokens. */
const CONTEXT = 'reelflow-callback-v1\0';
/** 128 bits of MAC: far past guessing at any rate the listener lets through. */
const MAC_BYTES = 16;
/** Workflow ids are at most a few hundred bytes; a longer token is refused before any work. */
export const MAX_TOKEN_CHARS = 1_024;

function macOf(secret: Buffer, workflowId: string): Buffer {
  return createHmac('sha256', secret)
    .update(CONTEXT + workflowId, 'utf8')
    .digest()
    .subarray(0, MAC_BYTES);
}

/** The token for an item's workflow: `v1.<workflow id, base64url>.<MAC, base64url>`; URL-safe. */
export function mintCallbackToken(secret: Buffer, workflowId: string): string {
  return `${VERSION}.${Buffer.from(workflowId, 'utf8').toString('base64url')}.${macOf(secret, workflowId).toString('base64url')}`;
}

/** The workflow id a token names when its MAC is this secret's; undefined for anything else. */
export function verifyCallbackToken(secret: Buffer, token: string): string | undefined {
  if (token.length > MAX_TOKEN_CHARS) return undefined;
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION) return undefined;
  const [, idPart, macPart] = parts as [string, string, string];
  if (!/^[A-Za-z0-9_-]+$/.test(idPart) || !/^[A-Za-z0-9_-]+$/.test(macPart)) return undefined;
  const workflowId = Buffer.from(idPart, 'base64url').toString('utf8');
  // The id must be exactly what was encoded (no second spelling of one id), and the MAC the secret's.
  if (workflowId === '' || Buffer.from(workflowId, 'utf8').toString('base64url') !== idPart) return undefined;
  const given = Buffer.from(macPart, 'base64url');
  // Base64 has spare bits in its last character: only the one spelling a worker mints is a token.
  if (given.toString('base64url') !== macPart) return undefined;
  const wanted = macOf(secret, workflowId);
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return undefined;
  return workflowId;
}
