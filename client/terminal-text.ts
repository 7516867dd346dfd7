// Text from gateways and job files (task ids, error messages, item keys) reaches the user's
// terminal and spreadsheet. In a terminal, control characters could move the cursor, rewrite what
// is on screen, set the window title or hide text; in a spreadsheet, a cell that starts with `=`
// is a formula. These helpers make such text inert where it is shown.

// ESC sequences (CSI with its parameters, OSC up to BEL or ST, any other two-byte escape), then
// lone C0/C1 controls, DEL, and the bidirectional overrides that reorder what a line appears to say.
// eslint-disable-next-line no-control-regex -- matching control characters is the point here
const ESCAPE_SEQUENCE = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-_])?/g;
/** Colour codes (SGR), captured so that split() keeps them at the odd indexes. */
// eslint-disable-next-line no-control-regex -- as above
const CSI_SGR = /(\u001b\[[0-9;]*m)/;
// eslint-disable-next-line no-control-regex -- as above
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** One line of plain text: every escape sequence and control character removed, line breaks and tabs made spaces. */
export function plainText(text: string): string {
  return text
    .replace(ESCAPE_SEQUENCE, '')
    .replace(/[\n\t]/g, ' ')
    .replace(CONTROL, '');
}

/** Text for a terminal that may carry our own colours: colour codes (SGR) stay, every other escape and control goes; line breaks stay. */
export function terminalText(text: string): string {
  return text
    .split(CSI_SGR)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(ESCAPE_SEQUENCE, '').replace(/\t/g, ' ').replace(CONTROL, '')))
    .join('');
}

/** Columns a character takes in a terminal: East Asian wide and fullwidth forms and most emoji take two. */
function charWidth(codePoint: number): number {
  const zeroWidth =
    (codePoint >= 0x0300 && codePoint <= 0x036f) ||
    (codePoint >= 0x200b && codePoint <= 0x200f) ||
    (codePoint >= 0xfe00 && codePoint <= 0xfe0f);
  if (zeroWidth) return 0;
  if (codePoint < 0x1100) return 1;
  const wide =
    (codePoint >= 0x1100 && codePoint <= 0x115f) ||
    (codePoint >= 0x2e80 && codePoint <= 0xa4cf && codePoint !== 0x303f) ||
    (codePoint >= 0xac00 && codePoint <= 0xd7a3) ||
    (codePoint >= 0xf900 && codePoint <= 0xfaff) ||
    (codePoint >= 0xfe30 && codePoint <= 0xfe4f) ||
    (codePoint >= 0xff00 && codePoint <= 0xff60) ||
    (codePoint >= 0xffe0 && codePoint <= 0xffe6) ||
    (codePoint >= 0x1f300 && codePoint <= 0x1faff) ||
    (codePoint >= 0x20000 && codePoint <= 0x3fffd);
  return wide ? 2 : 1;
}

/** Columns `text` takes on screen (plain text; colour codes count as zero). */
export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of text.replace(ESCAPE_SEQUENCE, '')) width += charWidth(ch.codePointAt(0)!);
  return width;
}

// One colour code or one character: a cut never splits a code (the terminal would eat what follows).
// eslint-disable-next-line no-control-regex -- as above
const SGR_OR_CHAR = /\u001b\[[0-9;]*m|[\s\S]/gu;

/** `text` cut to at most `width` columns, with `…` where it was cut; colour codes take no room, and one left open is closed. */
export function fitWidth(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  let out = '';
  let used = 0;
  for (const [piece] of text.matchAll(SGR_OR_CHAR)) {
    const w = piece.startsWith('\u001b[') ? 0 : charWidth(piece.codePointAt(0)!);
    if (used + w > width - 1) break;
    out += piece;
    used += w;
  }
  return `${out}…${CSI_SGR.test(text) ? '\u001b[0m' : ''}`;
}

/** `text` padded with spaces to `width` columns (wide characters counted as two). */
export function padToWidth(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}

/**
 * A CSV cell (RFC 4180 quoting) that a spreadsheet shows as text: a value starting with `=`, `+`,
 * `-`, `@`, tab or carriage return (after any spaces) is prefixed with `'` (OWASP's rule against
 * CSV injection). Control characters are removed, as for a terminal: CSV is often read in one.
 */
export function csvCell(value: string): string {
  const text = plainText(value);
  const inert = /^\s*[=+\-@]/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(inert) ? `"${inert.replace(/"/g, '""')}"` : inert;
}

/**
 * Plain `text` broken into lines of at most `width` columns, at spaces where it can, inside a
 * word too long for a line otherwise. Always at least one line.
 */
export function wrapToWidth(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  const push = () => {
    lines.push(line);
    line = '';
  };
  for (const word of plainText(text).split(/ +/)) {
    if (word === '') continue;
    const joined = line === '' ? word : `${line} ${word}`;
    if (displayWidth(joined) <= width) {
      line = joined;
      continue;
    }
    if (line !== '') push();
    for (const ch of word) {
      if (displayWidth(line + ch) > width && line !== '') push();
      line += ch;
    }
  }
  if (line !== '' || lines.length === 0) push();
  return lines;
}
