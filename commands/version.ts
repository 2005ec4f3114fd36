import type { Command } from 'commander';
import { action } from './shared/context.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';
import { cliVersion } from './shared/package-info.js';

export function register(program: Command): void {
  const cmd = program
    .command('version')
    .description('print the CLI version and the version of the service at --url');
  addClientOptions(cmd);

  cmd.action(action(async (opts: ClientOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const cli = cliVersion();
      let server;
      try {
        server = await client.version();
      } catch (err) {
        // Still say which CLI this is (in JSON too); the error that follows explains the server part.
        out.result({ cli: { version: cli }, server: null }, () => `cli     ${cli}\nserver  unreachable (see the error below)`);
        throw err;
      }
      out.result({ cli: { version: cli }, server }, () => [
        `cli     ${cli}`,
        `server  ${server.app_version} (api ${server.api_version}, commit ${server.git_commit}, built ${server.build_time})`,
      ].join('\n'));
    })));
}
