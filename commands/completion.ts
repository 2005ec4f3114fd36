import { Argument, Command } from 'commander';
import { action, attachContext, ioOf } from './shared/context.js';
import { addExamples } from './shared/help.js';

/** One node of the command tree, as the completion scripts need it. */
interface Node {
  name: string;
  description: string;
  flags: string[];
  children: Node[];
}

function nodeOf(cmd: Command): Node {
  return {
    name: cmd.name(),
    description: cmd.description().split('\n')[0],
    flags: cmd.options.flatMap((o) => [o.long, o.short].filter((f): f is string => f !== undefined)).concat('--help'),
    // Hidden commands (old names kept for scripts, like `retention`) are not offered.
    children: cmd.createHelp().visibleCommands(cmd).filter((c) => c.name() !== 'help').map(nodeOf),
  };
}

/** The whole tree: every command module is loaded here (only `completion` pays for it). */
async function commandTree(io: ReturnType<typeof ioOf>): Promise<Node[]> {
  const { COMMANDS } = await import('./registry.js');
  const root = new Command('service');
  attachContext(root, io);
  for (const load of Object.values(COMMANDS)) (await load()).register(root);
  return nodeOf(root).children;
}

/** Every command at any depth with its path of names (`['governance', 'retention', 'apply']`). */
function withPaths(tree: Node[], parent: string[] = []): { path: string[]; node: Node }[] {
  return tree.flatMap((node) => {
    const path = [...parent, node.name];
    return [{ path, node }, ...withPaths(node.children, path)];
  });
}

const words = (list: string[]) => list.join(' ');

/**
 * The script completes the name it was printed by (`service` or `agent-memory`): sourcing the
 * agent-memory one leaves the completion of the system's /usr/sbin/service alone.
 */
const functionName = (program: string) => `_${program.replace(/[^A-Za-z0-9]/g, '_')}_completion`;
const quoteFish = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export function bashScript(tree: Node[], program: string = 'service'): string {
  const fn = functionName(program);
  const all = withPaths(tree);
  // The command path is made of the words that extend a known path, so flags and their
  // values anywhere in between are skipped.
  const known = all.map(({ path }) => `"${words(path)}"`).join('|');
  const offers = all.map(({ path, node }) => `    "${words(path)}") opts="${words([...node.children.map((c) => c.name), ...node.flags])}" ;;`);
  return `# bash completion for ${program} (load with: source <(${program} completion bash))
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" opts="" path="" next i
  for ((i = 1; i < COMP_CWORD; i++)); do
    next="\${path:+$path }\${COMP_WORDS[i]}"
    case "$next" in
      ${known}) path="$next" ;;
    esac
  done
  case "$path" in
    "") opts="${words([...tree.map((c) => c.name), '--help', '--version'])}" ;;
${offers.join('\n')}
  esac
  case "$cur" in
    -*|'') ;;
    *) [ "$COMP_CWORD" -gt 1 ] && case "\${COMP_WORDS[COMP_CWORD-1]}" in -*) opts="" ;; esac ;;
  esac
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  if [ \${#COMPREPLY[@]} -eq 0 ]; then COMPREPLY=( $(compgen -f -- "$cur") ); fi
}
complete -F ${fn} ${program}
`;
}

export function zshScript(tree: Node[], program: string = 'service'): string {
  // zsh runs the bash function through its bash-compatibility layer.
  return `#compdef ${program}
# zsh completion for ${program} (load with: source <(${program} completion zsh))
autoload -U +X bashcompinit && bashcompinit
${bashScript(tree, program)}`;
}

export function fishScript(tree: Node[], program: string = 'service'): string {
  const lines = [`# fish completion for ${program} (load with: ${program} completion fish | source)`, `complete -c ${program} -f`];
  const seen = (path: string[]) => path.map((name) => `__fish_seen_subcommand_from ${name}`).join('; and ');
  const offer = (path: string[], children: Node[]) => {
    const none = `not __fish_seen_subcommand_from ${words(children.map((c) => c.name))}`;
    const when = path.length === 0 ? none : `${seen(path)}; and ${none}`;
    for (const c of children) lines.push(`complete -c ${program} -n "${when}" -a ${c.name} -d ${quoteFish(c.description)}`);
  };
  offer([], tree);
  for (const { path, node } of withPaths(tree)) {
    offer(path, node.children);
    for (const f of node.flags.filter((x) => x.startsWith('--'))) lines.push(`complete -c ${program} -n "${seen(path)}" -l ${f.slice(2)}`);
  }
  return `${lines.join('\n')}\n`;
}

const SCRIPTS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;

/** `service completion bash|zsh|fish`: prints a shell completion script. */
export function register(program: Command): void {
  const cmd = program
    .command('completion')
    .description('print a shell completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'the shell').choices(Object.keys(SCRIPTS)));
  addExamples(cmd, [
    'source <(agent-memory completion bash)     # in ~/.bashrc (or: source <(service completion bash))',
    'agent-memory completion fish > ~/.config/fish/completions/agent-memory.fish   # or: service completion fish',
  ]);
  cmd.action(action(async (shell: keyof typeof SCRIPTS, _opts: unknown, command: Command) => {
    const io = ioOf(command);
    io.stdout.write(SCRIPTS[shell](await commandTree(io), command.parent?.name() ?? 'service'));
  }));
}
