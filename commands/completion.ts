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
    children: cmd.commands.filter((c) => c.name() !== 'help').map(nodeOf),
  };
}

/** The whole tree: every command module is loaded here (only `completion` pays for it). */
async function commandTree(io: ReturnType<typeof ioOf>): Promise<Node[]> {
  const { COMMANDS } = await import('./registry.js');
  const root = new Command('service');
  attachContext(root, io);
  for (const load of Object.values(COMMANDS)) (await load()).register(root);
  return root.commands.map(nodeOf);
}

const words = (list: string[]) => list.join(' ');
const quoteFish = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export function bashScript(tree: Node[]): string {
  const level2 = tree.map((c) => `    ${c.name}) opts="${words([...c.children.map((s) => s.name), ...c.flags])}" ;;`);
  const level3 = tree.filter((c) => c.children.length > 0).flatMap((c) =>
    c.children.map((s) => `    "${c.name} ${s.name}") opts="${words(s.flags)}" ;;`));
  return `# bash completion for service (load with: source <(service completion bash))
_service_completion() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" opts=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    opts="${words([...tree.map((c) => c.name), '--help', '--version'])}"
  else
    case "\${COMP_WORDS[1]} \${COMP_WORDS[2]}" in
${level3.join('\n')}
    *)
      case "\${COMP_WORDS[1]}" in
${level2.map((l) => `  ${l}`).join('\n')}
      esac ;;
    esac
  fi
  case "$cur" in
    -*|'') ;;
    *) [ "$COMP_CWORD" -gt 1 ] && case "\${COMP_WORDS[COMP_CWORD-1]}" in -*) opts="" ;; esac ;;
  esac
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  if [ \${#COMPREPLY[@]} -eq 0 ]; then COMPREPLY=( $(compgen -f -- "$cur") ); fi
}
complete -F _service_completion service
`;
}

export function zshScript(tree: Node[]): string {
  // zsh runs the bash function through its bash-compatibility layer.
  return `#compdef service
# zsh completion for service (load with: source <(service completion zsh))
autoload -U +X bashcompinit && bashcompinit
${bashScript(tree)}`;
}

export function fishScript(tree: Node[]): string {
  const lines = ['# fish completion for service (load with: service completion fish | source)', 'complete -c service -f'];
  const top = words(tree.map((c) => c.name));
  for (const c of tree) {
    lines.push(`complete -c service -n "not __fish_seen_subcommand_from ${top}" -a ${c.name} -d ${quoteFish(c.description)}`);
    const subs = words(c.children.map((s) => s.name));
    for (const s of c.children) {
      lines.push(`complete -c service -n "__fish_seen_subcommand_from ${c.name}; and not __fish_seen_subcommand_from ${subs}" -a ${s.name} -d ${quoteFish(s.description)}`);
      for (const f of s.flags.filter((x) => x.startsWith('--'))) {
        lines.push(`complete -c service -n "__fish_seen_subcommand_from ${c.name}; and __fish_seen_subcommand_from ${s.name}" -l ${f.slice(2)}`);
      }
    }
    for (const f of c.flags.filter((x) => x.startsWith('--'))) {
      lines.push(`complete -c service -n "__fish_seen_subcommand_from ${c.name}" -l ${f.slice(2)}`);
    }
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
    'source <(service completion bash)          # in ~/.bashrc',
    'service completion fish > ~/.config/fish/completions/service.fish',
  ]);
  cmd.action(action(async (shell: keyof typeof SCRIPTS, _opts: unknown, command: Command) => {
    const io = ioOf(command);
    io.stdout.write(SCRIPTS[shell](await commandTree(io)));
  }));
}
