// The command a command line names, read from argv alone: before the program (and with it the
// Temporal SDK and every command) is loaded, so that only what the command needs is.

/** Global options that take a value (cli/program.ts). */
const GLOBAL_WITH_VALUE = new Set(['--log-level']);

/** The command word of `argv` (process.argv: node, script, ...) and the arguments after it. */
export function commandLine(argv: readonly string[]): { word: string | undefined; rest: string[] } {
  const args = argv.slice(2);
  let at = 0;
  while (at < args.length && args[at]!.startsWith('-')) at += GLOBAL_WITH_VALUE.has(args[at]!) ? 2 : 1;
  return { word: args[at], rest: args.slice(at + 1) };
}

export const commandWord = (argv: readonly string[]): string | undefined => commandLine(argv).word;

/** commander's collector for a repeatable option. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
