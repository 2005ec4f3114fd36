/**
 * `service mcp` over stdio against a real `service serve` child (env auth mode), driven by the
 * MCP SDK's own client: tools, a learn → recall round trip, pattern resources, and auth and
 * validation failures reported as tool errors. Runs dist/: `npm run build` first.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { childEnv, tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

const KEY = 'mcp-test-key-0123456789abcdef';
const TASK = 'Fetch a JSON API with retries and exponential backoff';
const CODE = 'async function fetchWithRetry(url) {\n  for (let i = 0; i < 5; i++) { /* backoff */ }\n}';

let dir: { path: string; remove(): Promise<void> };
let server: ServerHandle;
const clients: Client[] = [];

beforeAll(async () => {
  dir = await tempDir('cli-mcp-');
  server = await startServer({ dataPath: join(dir.path, 'data'), env: { SERVICE_API_KEYS: KEY } });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server?.stop();
  await dir.remove();
});

interface Started { client: Client; errors: Error[]; stderr: () => string }

/** `service mcp` as an MCP host starts it: the key and URL from the environment or from flags. */
async function startMcp(opts: { args?: string[]; env?: Record<string, string> }): Promise<Started> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...(opts.args ?? [])],
    env: childEnv(opts.env ?? {}) as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
  // Anything on stdout that is not a protocol message surfaces here as a parse error.
  const errors: Error[] = [];
  client.onerror = (err) => errors.push(err);
  await client.connect(transport);
  clients.push(client);
  return { client, errors, stderr: () => stderr };
}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** A spawned `mcp` answers once Node and the MCP SDK are loaded: seconds on a busy machine, so wait for the lines, not for a fixed second. */
const CHILD_ANSWERS = { timeout: 25_000, interval: 50 };

describe('service mcp (stdio)', () => {
  it('lists the tools, learns and recalls through the running service, and serves recalled patterns', async () => {
    const { client, errors, stderr } = await startMcp({ env: { SERVICE_URL: server.url, SERVICE_API_KEY: KEY } });
    expect(client.getServerVersion()?.name).toBe('agent-memory-service');
    expect(client.getInstructions()).toContain('recall');
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(13);
    expect(tools.every((tool) => tool.description && tool.inputSchema.type === 'object')).toBe(true);

    const learned = await call(client, 'learn', { task: TASK, code: CODE, eval_score: 8.5 });
    expect(learned.isError).toBeFalsy();
    const key = (learned.structuredContent as { pattern_key: string }).pattern_key;
    expect(text(learned)).toContain(`stored as ${key}`);

    const recalled = await call(client, 'recall', { task: 'call a JSON API, retrying with exponential backoff' });
    const top = (recalled.structuredContent as { matches: { pattern_key: string; reuse_tier: string; similarity: number }[] }).matches[0];
    expect(top.pattern_key).toBe(key);
    expect(text(recalled)).toContain(`${top.reuse_tier} · similarity ${top.similarity.toFixed(3)}`);
    expect(text(recalled)).toContain('async function fetchWithRetry(url)');

    // The recall answers its recall_id; report_outcome reports how reusing the match went.
    const recallId = (recalled.structuredContent as { recall_id: string }).recall_id;
    const reported = await call(client, 'report_outcome', { recall_id: recallId, pattern_key: key, passed: true, source: 'tests' });
    expect(reported.isError).toBeFalsy();
    expect(reported.structuredContent).toMatchObject({ recall_id: recallId, pattern_key: key, passed: true, source: 'tests', replaced: false });
    expect(text(reported)).toBe(`recorded: ${key} passed for recall ${recallId}`);

    // The recalled pattern can now be attached as a resource.
    const uri = `memory://${key}`;
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain(uri);
    const read = await client.readResource({ uri });
    expect(read.contents[0]).toMatchObject({ uri, mimeType: 'text/markdown' });
    expect((read.contents[0] as { text: string }).text).toContain(CODE);
    await expect(client.readResource({ uri: 'memory://patterns/neverrecalled' })).rejects.toThrow(/recall/);

    expect(errors).toEqual([]);
    expect(stderr()).toContain('serving MCP over stdio');
  });

  it('reports invalid arguments as tool errors carrying the code and the field', async () => {
    const { client } = await startMcp({ args: ['--url', server.url, '--api-key', KEY] });
    const invalid = await call(client, 'recall', { task: 'anything', limit: 0 });
    expect(invalid.isError).toBe(true);
    expect(invalid._meta?.error).toMatchObject({ code: 'validation_failed', status: 422, errors: [{ path: 'limit' }] });
    expect(text(invalid)).toMatch(/^error \(validation_failed, HTTP 422\): .*limit/);

    const badFlag = await call(client, 'recall', { task: 'anything', mark_reused: 'yes' });
    expect(badFlag._meta?.error).toMatchObject({ code: 'validation_failed', errors: [{ path: 'mark_reused' }] });
    expect((await call(client, 'no_such_tool', {}))._meta?.error).toMatchObject({ code: 'not_found' });
    // Still serving after the failures.
    expect((await call(client, 'metrics', {})).isError).toBeFalsy();
  });

  it('reports a wrong key as an unauthenticated tool error, and an unreachable service likewise', async () => {
    const { client } = await startMcp({ args: ['--url', server.url, '--api-key', 'wrong-key-0123456789'] });
    const refused = await call(client, 'recall', { task: 'anything' });
    expect(refused.isError).toBe(true);
    expect(refused._meta?.error).toMatchObject({ code: 'unauthenticated', status: 401 });

    const nowhere = await startMcp({ args: ['--url', 'http://127.0.0.1:9', '--api-key', KEY] });
    const unreachable = await call(nowhere.client, 'metrics', {});
    expect(unreachable._meta?.error).toMatchObject({ code: 'unreachable', status: null });
  });

  it('writes only protocol messages to stdout and exits 0 when the host closes stdin', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp', '--url', server.url, '--api-key', KEY], { env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const answered = new Promise<void>((resolve) => child.stdout.on('data', () => stdout.includes('\n') && resolve()));
    child.stdin.write(JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }) + '\n');
    await answered;
    child.stdin.end();
    expect(await exited).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'agent-memory-service' } } });
  });

  it('without a key against a server that needs one: says so on stderr at start, and the first call says what to set', async () => {
    const started = await startMcp({ args: ['--url', server.url] });
    const refused = await call(started.client, 'recall', { task: 'anything' });
    expect(refused.isError).toBe(true);
    expect(refused._meta?.error).toMatchObject({ code: 'unauthenticated', status: 401 });
    expect(text(refused)).toContain('service mcp was started without an API key: set SERVICE_API_KEY');
    await expect.poll(() => started.stderr(), CHILD_ANSWERS).toContain(`the service at ${server.url} requires an API key; every tool call will fail`);
  });

  it('answers a line that is not JSON with a JSON-RPC -32700 error, and keeps serving', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp', '--url', server.url, '--api-key', KEY], { env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    const lines = () => stdout.split('\n').filter((l) => l.trim() !== '');
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.stdin.write('this is not json\n');
    child.stdin.write('{"hello": "world"}\n');
    child.stdin.write(JSON.stringify({
      jsonrpc: '2.0', id: 7, method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }) + '\n');
    await expect.poll(() => lines().length, CHILD_ANSWERS).toBe(3);
    child.stdin.end();
    expect(await exited).toBe(0);
    const [parse, invalid, init] = lines().map((l) => JSON.parse(l) as { id: unknown; error?: { code: number }; result?: unknown });
    expect(parse).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect(invalid).toMatchObject({ id: null, error: { code: -32600 } });
    expect(init).toMatchObject({ id: 7, result: { serverInfo: { name: 'agent-memory-service' } } });
  });
});
