// How large a local reference file may be. Checked twice: when the job file is validated (so
// `validate`, `run` and `doctor` name the file at its line) and again by the gateway client just
// before a create (a file may have grown since), always before anything is sent.
//
// Neither docs/protocol.md nor the service's own document names a size limit ("asset size ...
// limits: not shown"). What the protocol itself implies: the general protocol carries a local file
// inline, as a `data:` URL in one JSON string, and the gateway has to hold that string whole to
// relay it (new-api, the gateway docs/protocol.md describes, reads the whole body and decodes
// it before relaying). The longest string a JavaScript runtime can hold is 2^29 - 24 characters
// (V8's limit, `buffer.constants.MAX_STRING_LENGTH`; the 420 MB reference that failed with
// "Cannot create a string longer than 0x1fffffe8 characters" met exactly this), and browsers cap a
// `data:` URL at 512 MiB too, so a longer one cannot be expected to pass any gateway. The openai
// protocol uploads the bytes raw and documents nothing either; the same limit applies to it, so a
// job file that is valid stays valid when a model's protocol changes.

/** The longest JSON string (and so `data:` URL) a reference may become: V8's string length limit. */
export const MAX_INLINE_CHARS = 2 ** 29 - 24;

/** Room left for the `data:<type>;base64,` prefix (the longest reelflow writes, for video/x-matroska, is 29 characters). */
const DATA_URL_PREFIX_ALLOWANCE = 64;

/** The largest local reference file, in bytes: its base64 and prefix fit in MAX_INLINE_CHARS (about 384 MiB). */
export const MAX_REFERENCE_BYTES = 3 * Math.floor((MAX_INLINE_CHARS - DATA_URL_PREFIX_ALLOWANCE) / 4);

/** `440401920` -> `420.0 MiB (440,401,920 bytes)`; under a MiB, `5,000 bytes`. */
export function describeSize(bytes: number): string {
  const exact = `${bytes.toLocaleString('en-US')} bytes`;
  return bytes < 2 ** 20 ? exact : `${(bytes / 2 ** 20).toFixed(1)} MiB (${exact})`;
}

/**
 * Why a local reference of `bytes` cannot be sent, or undefined when it can. `what` names the file
 * as the user wrote it.
 */
export function referenceSizeProblem(what: string, bytes: number): string | undefined {
  if (bytes <= MAX_REFERENCE_BYTES) return undefined;
  return (
    `${what} is ${describeSize(bytes)}, over the ${describeSize(MAX_REFERENCE_BYTES)} a local reference may have ` +
    '(the general protocol sends it inline as a data: URL, one JSON string, and 512 MiB of text is the most a gateway can be ' +
    'expected to hold): use a smaller file, or an http(s) URL the gateway can fetch'
  );
}
