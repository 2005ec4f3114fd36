import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ApiError, type ServiceClient } from '../client/index.js';
import type { ToolFailure } from './errors.js';
import { createMcpServer } from './server.js';

export interface StdioOptions {
  client: ServiceClient;
  version: string;
  stdin: Readable;
  /** Protocol messages only: nothing else may ever be written here. */
  stdout: Writable;
  /** Logs. */
  stderr: { write(chunk: string): unknown };
  /** Whether an API key was configured (--api-key, SERVICE_API_KEY). */
  hasApiKey: boolean;
}

const NO_KEY = 'service mcp was started without an API key: set SERVICE_API_KEY (or pass --api-key) in the MCP host\'s configuration of this server';

/**
 * A line on stdin that is not JSON (-32700) or not a JSON-RPC message (-32600) gets the error
 * reply JSON-RPC prescribes, id null, instead of silence: the host sees what went wrong.
 */
function protocolErrorReply(err: Error): string | null {
  if (err instanceof SyntaxError) return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${err.message}` } });
  if (err.name === 'ZodError') return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' } });
  return null;
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
    // Without a key, a refusal says what to configure, not just "missing API key".
    adjustFailure: (failure: ToolFailure) => (!opts.hasApiKey && failure.status === 401 ? { ...failure, detail: `${failure.detail} (${NO_KEY})` } : failure),
  });
  const transport = new StdioServerTransport(opts.stdin, opts.stdout);
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
    opts.stdin.once('end', resolve);
    opts.stdin.once('close', resolve);
  });
  server.onerror = (err) => {
    log(`protocol error: ${err.message}`);
    const reply = protocolErrorReply(err);
    if (reply !== null) opts.stdout.write(`${reply}\n`);
  };
  await server.connect(transport);
  log(`serving MCP over stdio; tools call ${opts.client.url}`);
  if (!opts.hasApiKey) await warnIfKeyNeeded(opts.client, log);
  // A person who ran it by hand would otherwise look at a silent terminal.
  if ((opts.stdin as { isTTY?: boolean }).isTTY) log('waiting for an MCP client on stdin (MCP hosts start this command themselves; Ctrl-D ends it)');
  await closed;
  await server.close();
}

/** Without a key, asks the service once whether it wants one, so the host's log says so at start. */
async function warnIfKeyNeeded(client: ServiceClient, log: (message: string) => void): Promise<void> {
  try {
    await client.health();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) log(`the service at ${client.url} requires an API key; every tool call will fail: ${NO_KEY}`);
  }
}
