import type { Readable, Writable } from 'node:stream';
import { importOptional } from '../src/core/optional-module.js';
import type { Command } from 'commander';
import { action, ioOf } from './shared/context.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';
import { cliVersion } from './shared/package-info.js';

export function register(program: Command): void {
  const cmd = program
    .command('mcp')
    .description('serve the memory as MCP tools over stdio (for Claude Desktop, Claude Code, Cursor…), forwarding to a running service');
  addClientOptions(cmd);

  cmd.action(action(async (opts: ClientOptionValues, command: Command) => {
    const io = ioOf(command);
    // The MCP SDK is loaded only by this command, so every other command starts as fast as before.
    const { serveStdio } = await importOptional(() => import('../src/mcp/stdio.js'), 'service mcp', 'npm install @modelcontextprotocol/sdk@1');
    await withClient(opts, command, (client) => serveStdio({
      client,
      version: cliVersion(),
      stdin: io.stdin as unknown as Readable,
      stdout: io.stdout as unknown as Writable,
      stderr: io.stderr,
      hasApiKey: opts.apiKey !== undefined && opts.apiKey !== '',
    }));
  }));
}
