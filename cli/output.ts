// Where output goes (docs/commands.md, "Scripting reelflow"): `--json` owns stdout; human text then goes to stderr. Human
// text is redacted, and loses every control sequence but our colours (client/terminal-text.ts).
import { redact } from '../gateway';
import { terminalText } from '../client/terminal-text';

export interface Output {
  json: boolean;
  /** Human lines: stdout normally, stderr when --json owns stdout. */
  line(text?: string): void;
  /** Progress and notes: always stderr. */
  note(text: string): void;
  /** The one JSON document on stdout. */
  result(value: unknown): void;
}

export function createOutput(json: boolean): Output {
  return {
    json,
    line: (text = '') => (json ? process.stderr : process.stdout).write(`${terminalText(redact(text))}\n`),
    note: (text) => process.stderr.write(`${terminalText(redact(text))}\n`),
    result: (value) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`),
  };
}
