/**
 * MCP over Streamable HTTP (POST /mcp, SERVICE_MCP=true) in DB auth mode, driven by the MCP
 * SDK's own client: keys of each role get exactly the tools their role's REST routes allow,
 * and one tenant's tools never see another tenant's memory.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPermission, type Permission } from '../../src/core/permissions.js';
import type { Role, Scope } from '../../src/core/types.js';
import { requirePostgres } from '../support/pg.js';
import { perFileDatabase, provisionKey, startDbServer, type DbServer } from './db-auth-helpers.js';

const hasPg = await requirePostgres('MCP over HTTP');
const database = perFileDatabase('mcp_http');

const A: Scope = { tenant_id: 'acme', project_id: 'default' };
const B: Scope = { tenant_id: 'globex', project_id: 'default' };
const TASK = 'Parse a CSV file of invoices and sum the totals per customer';
const CODE = 'import csv\n\ndef totals(path):\n    sums = {}\n    return sums';

interface ToolError { code: string; status: number | null; detail: string; errors?: { path: string; message: string }[] }

describe.skipIf(!hasPg)('MCP over Streamable HTTP', () => {
  let t: DbServer;
  let url: URL;
  const secrets = new Map<string, string>();
  const clients: Client[] = [];

  const connect = async (secret: string | null): Promise<Client> => {
    const transport = new StreamableHTTPClientTransport(url, {
      requestInit: secret ? { headers: { authorization: `Bearer ${secret}` } } : {},
    });
    const client = new Client({ name: 'mcp-http-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  };
  const as = (tenant: Scope, role: Role) => connect(secrets.get(`${tenant.tenant_id}:${role}`)!);
  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const errorOf = (result: CallToolResult): ToolError => {
    expect(result.isError).toBe(true);
    return result._meta?.error as ToolError;
  };
  const text = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

  beforeAll(async () => {
    t = await startDbServer((await database.schema()).url, { SERVICE_MCP: 'true' });
    for (const tenant of [A, B]) {
      for (const role of ['reader', 'editor', 'admin'] as const) {
        secrets.set(`${tenant.tenant_id}:${role}`, (await provisionKey(t.keyStore, { ...tenant, role })).secret);
      }
    }
    const address = await t.server.listen({ host: '127.0.0.1', port: 0 });
    url = new URL('/mcp', address);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await t?.close();
    await database.drop();
  });

  it('lists the eleven tools with JSON schemas derived from the contracts', async () => {
    const { tools } = await (await as(A, 'reader')).listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'analyze_failures', 'compose', 'delete_pattern', 'evaluate', 'feedback', 'find_by_skills', 'learn', 'metrics',
      'recall', 'register_skills', 'report_outcome',
    ]);
    const recall = tools.find((tool) => tool.name === 'recall')!;
    expect(recall.inputSchema.required).toEqual(['task']);
    expect(Object.keys(recall.inputSchema.properties ?? {})).toContain('mark_reused');
    expect(Object.keys(recall.inputSchema.properties ?? {})).not.toContain('readonly');
    const learn = tools.find((tool) => tool.name === 'learn')!;
    expect(learn.inputSchema.required).toEqual(expect.arrayContaining(['task', 'code', 'eval_score']));
    expect(learn.outputSchema?.type).toBe('object');
    expect(tools.find((tool) => tool.name === 'delete_pattern')!.annotations?.destructiveHint).toBe(true);
  });

  it('an editor learns, a reader recalls it (read-only unless mark_reused), but a reader may not learn', async () => {
    const editor = await as(A, 'editor');
    const learned = await call(editor, 'learn', { task: TASK, code: CODE, eval_score: 9 });
    expect(learned.isError).toBeFalsy();
    const key = (learned.structuredContent as { pattern_key: string }).pattern_key;
    expect(key).toMatch(/^patterns\//);

    const reader = await as(A, 'reader');
    const recalled = await call(reader, 'recall', { task: 'sum invoice totals per customer from a CSV file', limit: 3 });
    expect(recalled.isError).toBeFalsy();
    const matches = (recalled.structuredContent as { matches: { pattern_key: string; reuse_tier: string; pattern: { reuse_count: number } }[] }).matches;
    expect(matches[0].pattern_key).toBe(key);
    expect(text(recalled)).toContain(matches[0].reuse_tier);
    expect(text(recalled)).toMatch(/similarity 0\.\d{3}/);
    expect(text(recalled)).toContain('def totals(path):');

    // Read-only by default: the reuse count moves only when mark_reused is set.
    await call(reader, 'recall', { task: TASK, mark_reused: true });
    const after = await call(reader, 'recall', { task: TASK });
    const reused = (after.structuredContent as typeof recalled.structuredContent & { matches: typeof matches }).matches;
    expect(matches[0].pattern.reuse_count).toBe(0);
    expect(reused[0].pattern.reuse_count).toBe(1);

    // explain: the parts in the structured result and one line per match in the text.
    const explained = await call(reader, 'recall', { task: TASK, explain: true, limit: 1 });
    const body = explained.structuredContent as { matches: { explain: { tier_rule: string } }[]; tier_policy: { policy: string } };
    expect(body.matches[0].explain.tier_rule).toBe('same_text');
    expect(body.tier_policy.policy).toBe('calibrated');
    expect(text(explained)).toMatch(/explain: cosine 1\.000 · centred 1\.000 · bm25 \d+\.\d{3} .* rule same_text/);
    expect(text(explained)).toContain('tier policy: calibrated:');

    const refused = errorOf(await call(reader, 'learn', { task: 'a reader tries to write', code: 'x = 1', eval_score: 5 }));
    expect(refused).toMatchObject({ code: 'forbidden', status: 403 });
    expect(refused.detail).toContain('"learn" permission');
  });

  it('the recall tool answers a recall_id that report_outcome reports against; a reader may not report', async () => {
    const editor = await as(A, 'editor');
    const key = ((await call(editor, 'learn', { task: 'Parse ISO dates from log lines', code: 'parse_dates()', eval_score: 8 }))
      .structuredContent as { pattern_key: string }).pattern_key;
    const recalled = await call(editor, 'recall', { task: 'Parse ISO dates from log lines', limit: 3 });
    const recallId = (recalled.structuredContent as { recall_id: string }).recall_id;
    expect(recallId).toMatch(/^[0-9a-z]+$/);
    expect(text(recalled)).toContain(`recall_id: ${recallId}`);
    const reported = await call(editor, 'report_outcome', { recall_id: recallId, pattern_key: key, passed: false, detail: 'breaks on time zones' });
    expect(reported.isError).toBeFalsy();
    expect(reported.structuredContent).toMatchObject({ recall_id: recallId, pattern_key: key, passed: false, detail: 'breaks on time zones', replaced: false });
    expect(text(reported)).toBe(`recorded: ${key} failed for recall ${recallId}`);
    const again = await call(editor, 'report_outcome', { recall_id: recallId, pattern_key: key, passed: true });
    expect(again.structuredContent).toMatchObject({ passed: true, replaced: true });
    expect(errorOf(await call(editor, 'report_outcome', { recall_id: 'unknown1', pattern_key: key, passed: true }))).toMatchObject({ status: 404 });
    expect(errorOf(await call(await as(A, 'reader'), 'report_outcome', { recall_id: recallId, pattern_key: key, passed: true })))
      .toMatchObject({ code: 'forbidden', status: 403 });
  });

  it('checks each tool against its route permission: deleting needs an admin', async () => {
    const editor = await as(A, 'editor');
    const key = ((await call(editor, 'learn', { task: 'Rotate log files older than a week', code: 'rotate()', eval_score: 7 }))
      .structuredContent as { pattern_key: string }).pattern_key;
    expect(errorOf(await call(editor, 'delete_pattern', { key }))).toMatchObject({ code: 'forbidden', status: 403 });
    const deleted = await call(await as(A, 'admin'), 'delete_pattern', { key });
    expect(deleted.structuredContent).toEqual({ deleted: true, pattern_key: key });
    expect(text(deleted)).toBe(`deleted ${key}`);
  });

  it('refuses exactly the tools whose REST route needs a permission the role lacks', async () => {
    const routePermission: Record<string, Permission> = {
      recall: 'recall', learn: 'learn', evaluate: 'evaluate', compose: 'compose', feedback: 'feedback:read',
      analyze_failures: 'analyze-failures', delete_pattern: 'patterns:delete', metrics: 'metrics',
      register_skills: 'skills:register', find_by_skills: 'skills:search', report_outcome: 'learn',
    };
    const args: Record<string, Record<string, unknown>> = {
      recall: { task: 'anything' }, learn: { task: 'matrix task', code: 'x', eval_score: 5 }, evaluate: { code: 'x' },
      compose: { task: 'anything' }, feedback: {}, analyze_failures: {}, delete_pattern: { key: 'patterns/doesnotexist' },
      metrics: {}, register_skills: { pattern_key: 'patterns/doesnotexist', skills: ['a'] }, find_by_skills: { skills: ['a'] },
      report_outcome: { recall_id: 'doesnotexist', pattern_key: 'patterns/doesnotexist', passed: true },
    };
    for (const role of ['reader', 'editor', 'admin'] as const) {
      const client = await as(A, role);
      for (const [tool, permission] of Object.entries(routePermission)) {
        const result = await call(client, tool, args[tool]);
        const refused = result.isError === true && (result._meta?.error as ToolError).code === 'forbidden';
        expect({ role, tool, refused }).toEqual({ role, tool, refused: !hasPermission(role, permission) });
      }
    }
  });

  it('keeps tenants apart: another tenant neither recalls nor deletes the pattern', async () => {
    const editorA = await as(A, 'editor');
    const key = ((await call(editorA, 'learn', { task: 'Resize uploaded images to thumbnails', code: 'thumb()', eval_score: 8 }))
      .structuredContent as { pattern_key: string }).pattern_key;

    const readerB = await as(B, 'reader');
    const recalled = await call(readerB, 'recall', { task: 'Resize uploaded images to thumbnails' });
    expect((recalled.structuredContent as { matches: unknown[] }).matches).toEqual([]);
    expect(text(recalled)).toContain('no matches');
    expect((await call(readerB, 'metrics', {})).structuredContent).toMatchObject({ pattern_count: 0 });
    expect(errorOf(await call(await as(B, 'admin'), 'delete_pattern', { key }))).toMatchObject({ code: 'not_found', status: 404 });

    const stillThere = await call(await as(A, 'reader'), 'recall', { task: 'Resize uploaded images to thumbnails' });
    expect((stillThere.structuredContent as { matches: { pattern_key: string }[] }).matches[0].pattern_key).toBe(key);
  });

  it('reports invalid arguments as a tool error with the field, not a crash', async () => {
    const editor = await as(A, 'editor');
    const invalid = errorOf(await call(editor, 'learn', { task: '   ', code: 'x', eval_score: 11 }));
    expect(invalid).toMatchObject({ code: 'validation_failed', status: 422 });
    expect(invalid.errors?.map((e) => e.path).sort()).toEqual(['eval_score', 'task']);
    // The server keeps serving the same client afterwards.
    expect((await call(editor, 'metrics', {})).isError).toBeFalsy();
  });

  it('tags and finds patterns by skills, lists feedback and failure clusters, and reports a missing LLM provider', async () => {
    const editor = await as(A, 'editor');
    const key = ((await call(editor, 'learn', { task: 'Deduplicate rows of a spreadsheet', code: 'dedupe(rows)', eval_score: 7 }))
      .structuredContent as { pattern_key: string }).pattern_key;
    const tagged = await call(editor, 'register_skills', { pattern_key: key, skills: ['spreadsheet', 'dedupe'] });
    expect(tagged.structuredContent).toEqual({ pattern_key: key, registered: 2, skills: ['spreadsheet', 'dedupe'] });

    const found = await call(await as(A, 'reader'), 'find_by_skills', { skills: ['dedupe'] });
    expect(found.structuredContent).toMatchObject({ count: 1, matches: [{ pattern_key: key }] });
    expect(text(found)).toContain('dedupe(rows)');
    expect((await call(await as(B, 'reader'), 'find_by_skills', { skills: ['dedupe'] })).structuredContent).toMatchObject({ count: 0 });

    expect((await call(await as(A, 'reader'), 'feedback', {})).structuredContent).toMatchObject({ feedback: [], has_more: false });
    const clusters = await call(editor, 'analyze_failures', { min_count: 1 });
    // Clusters are built from evaluator feedback; without an LLM provider none was recorded.
    expect(clusters.structuredContent).toEqual({ clusters: [] });
    expect(text(clusters)).toBe('no failure clusters');

    const noLlm = errorOf(await call(editor, 'evaluate', { task: 'add', code: 'a + b' }));
    expect(noLlm).toMatchObject({ code: 'llm_not_configured', status: 501 });
  });

  it('refuses a request without a valid key with 401 before any MCP message is handled', async () => {
    await expect(connect(null)).rejects.toMatchObject({ code: 401, message: expect.stringContaining('missing API key') });
    await expect(connect('not-a-real-key')).rejects.toMatchObject({ code: 401 });
  });
});
