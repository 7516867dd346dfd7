// `reelflow completion bash|zsh|fish`: a completion script made from the command tree itself, so
// that every command, subcommand and option registered in cli/program.ts is completed, and nothing
// else (docs/commands.md). Job files and other arguments complete as file names.
import type { Command } from 'commander';
import { UsageError } from '../errors';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

/** One command of the tree: its path from the top (`''`, `schedule`), subcommands and long options. */
interface Node {
  path: string;
  subcommands: { name: string; description: string }[];
  /** Long options, with the values they take when these are a fixed set (`.choices()`). */
  options: { long: string; description: string; choices?: readonly string[] }[];
}

function nodes(command: Command, path = ''): Node[] {
  const visible = command.commands.filter((c) => (c as Command & { _hidden?: boolean })._hidden !== true);
  const node: Node = {
    path,
    subcommands: visible.map((c) => ({ name: c.name(), description: c.description() })),
    options: [
      ...command.options
        .filter((o) => !o.hidden && o.long)
        .map((o) => ({ long: o.long!, description: o.description, choices: o.argChoices })),
      { long: '--help', description: 'display help for command' },
    ],
  };
  return [node, ...visible.flatMap((c) => nodes(c, path ? `${path} ${c.name()}` : c.name()))];
}

/** A word list as one single-quoted shell word (names and options hold no quotes). */
const words = (list: string[]): string => `'${list.join(' ')}'`;

export function bashScript(program: Command): string {
  const tree = nodes(program);
  const cases = (pick: (n: Node) => string[]) => tree.map((n) => `    ${words([n.path])}) echo ${words(pick(n))} ;;`).join('\n');
  const choices = tree
    .flatMap((n) =>
      n.options.flatMap((o) => (o.choices ? [`    ${words([`${n.path}|${o.long}`])}) echo ${words([...o.choices])} ;;`] : [])),
    )
    .join('\n');
  return `# reelflow completion for bash: source it, or save it as
# ~/.local/share/bash-completion/completions/reelflow (made by \`reelflow completion bash\`)
_reelflow_subcommands() {
  case "$1" in
${cases((n) => n.subcommands.map((s) => s.name))}
  esac
}
_reelflow_options() {
  case "$1" in
${cases((n) => n.options.map((o) => o.long))}
  esac
}
_reelflow_choices() {
  case "$1|$2" in
${choices}
  esac
}
_reelflow_completion() {
  [[ -n "\${ZSH_VERSION:-}" ]] && setopt localoptions ksharrays
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" subs word i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    subs=" $(_reelflow_subcommands "$path") "
    if [[ "$word" != -* && "$subs" == *" $word "* ]]; then path="\${path:+$path }$word"; fi
  done
  subs="$(_reelflow_choices "$path" "\${COMP_WORDS[COMP_CWORD - 1]}")"
  if [[ -n "$subs" ]]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_reelflow_options "$path")" -- "$cur"))
    return 0
  fi
  subs="$(_reelflow_subcommands "$path")"
  if [[ -n "$subs" ]]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -o bashdefault -F _reelflow_completion reelflow
`;
}

export function zshScript(program: Command): string {
  // zsh runs the bash function through bashcompinit (part of zsh); the function sets ksh_arrays
  // for itself, so COMP_WORDS counts from 0 as in bash.
  return `# reelflow completion for zsh: source it from ~/.zshrc (made by \`reelflow completion zsh\`)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashScript(program)}`;
}

/** A fish single-quoted string. */
const fishQuote = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export function fishScript(program: Command): string {
  const tree = nodes(program);
  const lines = ['# reelflow completion for fish: save as ~/.config/fish/completions/reelflow.fish (made by `reelflow completion fish`)'];
  for (const node of tree) {
    const names = node.path.split(' ').filter(Boolean);
    const last = names.at(-1);
    const siblings = node.subcommands.map((s) => s.name).join(' ');
    // Where this node's subcommands and options apply: at the top before any subcommand, else after its name.
    const here = last === undefined ? '__fish_use_subcommand' : fishQuote(`__fish_seen_subcommand_from ${last}`);
    const before =
      last === undefined ? here : fishQuote(`__fish_seen_subcommand_from ${last}; and not __fish_seen_subcommand_from ${siblings}`);
    for (const sub of node.subcommands)
      lines.push(`complete -c reelflow -n ${before} -a ${sub.name} -d ${fishQuote(sub.description.split('\n')[0] ?? '')}`);
    for (const option of node.options) {
      const values = option.choices ? ` -x -a ${fishQuote(option.choices.join(' '))}` : '';
      lines.push(`complete -c reelflow -n ${here} -l ${option.long.slice(2)}${values} -d ${fishQuote(option.description)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export function completionScript(program: Command, shell: string): string {
  if (!(SHELLS as readonly string[]).includes(shell)) throw new UsageError(`completion: unknown shell "${shell}"; use bash, zsh or fish`);
  const make: Record<Shell, (p: Command) => string> = { bash: bashScript, zsh: zshScript, fish: fishScript };
  return make[shell as Shell](program);
}

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script for bash, zsh or fish (see docs/commands.md to install it)')
    .argument('<shell>', 'bash, zsh or fish')
    .action((shell: string) => {
      process.stdout.write(completionScript(program, shell));
    });
}
