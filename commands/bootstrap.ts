import { Option, type Command } from 'commander';
import { action, ioOf } from './shared/context.js';
import { UsageError } from './shared/exit-codes.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';
import { askSecret, canPrompt, printIssuedSecret } from './key-secrets.js';

interface BootstrapOptions extends ClientOptionValues {
  token?: string;
}

/**
 * `service bootstrap`: trades the server's SERVICE_BOOTSTRAP_TOKEN for the first owner key
 * (DB auth mode). The token comes from --token, else SERVICE_BOOTSTRAP_TOKEN, else a hidden
 * prompt when a person is at the terminal; never a prompt in scripts or CI.
 */
export function register(program: Command): void {
  const cmd = program
    .command('bootstrap')
    .description('create the first owner API key with the server\'s bootstrap token (DB auth mode, once)')
    .addOption(new Option('--token <token>', 'the bootstrap token (prefer SERVICE_BOOTSTRAP_TOKEN or the prompt: flags end up in shell history)'));
  addClientOptions(cmd);
  cmd.action(action(async (opts: BootstrapOptions, command: Command) => {
    const io = ioOf(command);
    const token = opts.token ?? io.env.bootstrapToken ?? (canPrompt(io) ? await askSecret(io, 'Bootstrap token') : null);
    if (token === null) {
      throw new UsageError('no bootstrap token: pass --token or set SERVICE_BOOTSTRAP_TOKEN (there is no terminal to ask on)');
    }
    return withClient(opts, command, async (client, out) => {
      const created = await client.keys.bootstrap(token);
      printIssuedSecret(io, out, created, 'owner key created', [
        'then remove SERVICE_BOOTSTRAP_TOKEN from the server\'s environment: it is not needed again',
      ]);
    });
  }));
}
