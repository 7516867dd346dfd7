// Suggestions for an unknown command. Commander suggests names spelled alike (`stauts` -> status);
// a word that means the same but is spelled otherwise (`schedule remove`) gets the command it
// means from this table, at every level of the tree (docs/commands.md).
import type { Command } from 'commander';

/** Words users type for a command, by the command they mean (applied where that command exists). */
const MEANS = new Map(
  Object.entries({
    remove: 'delete',
    rm: 'delete',
    del: 'delete',
    ls: 'status',
    list: 'status',
    ps: 'status',
    show: 'status',
    start: 'run',
    stop: 'cancel',
    kill: 'cancel',
    abort: 'cancel',
    check: 'validate',
    lint: 'validate',
    create: 'apply',
    update: 'apply',
    resume: 'unpause',
  }),
);

type WithUnknownCommand = Command & { unknownCommand(): void };

/** Makes `command` and every command below it suggest the command an unknown word means. */
export function suggestMeanings(command: Command): void {
  const patched = command as WithUnknownCommand;
  const commanders = patched.unknownCommand.bind(patched);
  patched.unknownCommand = function unknownCommand(this: Command): void {
    const word = this.args[0];
    const meant = word === undefined ? undefined : MEANS.get(word);
    if (meant !== undefined && this.commands.some((c) => c.name() === meant)) {
      this.error(`error: unknown command '${word}'\n(Did you mean ${meant}?)`, { code: 'commander.unknownCommand' });
    }
    commanders();
  };
  for (const sub of command.commands) suggestMeanings(sub);
}
