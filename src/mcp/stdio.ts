import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ServiceClient } from '../client/index.js';
import { createMcpServer } from './server.js';

export interface StdioOptions {
  client: ServiceClient;
  version: string;
  stdin: Readable;
  /** Protocol messages only: nothing else may ever be written here. */
  stdout: Writable;
  /** Logs. */
  stderr: { write(chunk: string): unknown };
}

/**
 * Serves MCP over stdin/stdout until the client closes stdin (how MCP hosts end a stdio
 * server) or the connection closes. Resolves once the server is closed.
 */
export async function serveStdio(opts: StdioOptions): Promise<void> {
  const log = (message: string) => opts.stderr.write(`service mcp: ${message}\n`);
  const server = createMcpServer({
    client: opts.client,
    version: opts.version,
    resources: true,
    logError: (err, message) => log(`${message}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
  });
  const transport = new StdioServerTransport(opts.stdin, opts.stdout);
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
    opts.stdin.once('end', resolve);
    opts.stdin.once('close', resolve);
  });
  server.onerror = (err) => log(`protocol error: ${err.message}`);
  await server.connect(transport);
  log(`serving MCP over stdio; tools call ${opts.client.url}`);
  // A person who ran it by hand would otherwise look at a silent terminal.
  if ((opts.stdin as { isTTY?: boolean }).isTTY) log('waiting for an MCP client on stdin (MCP hosts start this command themselves; Ctrl-D ends it)');
  await closed;
  await server.close();
}
