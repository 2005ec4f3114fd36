/**
 * The LLM-backed MCP tools (evaluate, compose, then feedback and analyze_failures fed by the
 * evaluation) over POST /mcp, against the fake provider: their structured results pass the SDK
 * client's output-schema validation and their text renderings show what a model needs.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reply } from '../fixtures/fake-llm/server.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import type { TestServer } from '../api/helpers.js';
import { evaluatorScript, startLlmServer } from './helpers.js';

const fake = await useFakeLlm();
let t: TestServer;
let client: Client;

beforeAll(async () => {
  t = await startLlmServer(fake, 'provider_a', { SERVICE_MCP: 'true' });
  const address = await t.server.listen({ host: '127.0.0.1', port: 0 });
  client = new Client({ name: 'mcp-llm-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', address)));
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe('LLM tools over MCP', () => {
  it('evaluate returns the median of the judges; feedback and analyze_failures then show their issue', async () => {
    evaluatorScript(fake, [7, 8, 9], { feedback: () => 'Inputs are never validated before use.' });
    const evaluated = await call('evaluate', { task: 'Add two numbers', code: 'const add = (a, b) => a + b;', num_evals: 3 });
    expect(evaluated.isError).toBeFalsy();
    expect(evaluated.structuredContent).toMatchObject({ median_score: 8, failed_evaluators: 0 });
    expect(text(evaluated)).toMatch(/^median score 8\.0\/10 from 3 judges/);

    // The feedback store lists issues seen at least twice: a second evaluation repeats it.
    expect((await call('evaluate', { task: 'Add two numbers', code: 'const add = (a, b) => a + b;', num_evals: 1 })).isError).toBeFalsy();
    const feedback = await call('feedback', { limit: 5 });
    const items = (feedback.structuredContent as { feedback: { text: string; count: number }[] }).feedback;
    expect(items.map((i) => i.text).join(' ')).toContain('never validated');
    expect(text(feedback)).toContain('never validated');

    const clusters = await call('analyze_failures', {});
    expect(clusters.isError).toBeFalsy();
    expect(text(clusters)).toContain('never validated');
  });

  it('compose returns the stages with their reuse tier and similarity', async () => {
    await call('learn', { task: 'Load sales.csv into JSON rows', code: 'rows = load("sales.csv")', eval_score: 9 });
    fake.script(() => reply.json({
      stages: [
        { name: 'load', task: 'Load sales.csv into JSON rows', reads: ['sales.csv'], writes: ['rows.json'] },
        { name: 'report', task: 'Write a markdown report of the rows', reads: ['rows.json'], writes: ['report.md'] },
      ],
    }));
    const composed = await call('compose', { task: 'Turn sales.csv into a markdown report' });
    expect(composed.isError).toBeFalsy();
    const stages = (composed.structuredContent as { stages: { name: string; reuse_tier: string }[] }).stages;
    expect(stages.map((s) => s.name)).toEqual(['load', 'report']);
    expect(stages[0].reuse_tier).toBe('duplicate');
    expect(text(composed)).toMatch(/^2 stages; stages connect\n1\. load · duplicate · similarity /);
  });
});
