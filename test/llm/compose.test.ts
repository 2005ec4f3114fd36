import { afterEach, describe, expect, it } from 'vitest';
import { ComposeResponse } from '../../src/contracts/llm.js';
import { reply } from '../fixtures/fake-llm/server.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import { startServer, type TestServer } from '../api/helpers.js';
import { PROVIDERS, startLlmServer } from './helpers.js';

const fake = await useFakeLlm();
let t: TestServer | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const TASK = 'Read sales.csv, clean the rows, compute monthly totals and write a report.md';

const stage = (name: string, reads: string[], writes: string[], task = `${name} step of the sales pipeline`) => ({ name, task, reads, writes });

const GOOD = [
  stage('load', ['sales.csv'], ['rows.json'], 'Load sales.csv into JSON rows'),
  stage('aggregate', ['rows.json'], ['totals.json'], 'Compute monthly totals from JSON rows'),
  stage('report', ['totals.json'], ['report.md'], 'Write a markdown report of monthly totals'),
];

describe.each(PROVIDERS)('POST /v1/compose (%s)', (provider) => {
  it('plans stages with one LLM call and matches each stage to stored patterns read-only', async () => {
    t = await startLlmServer(fake, provider);
    const learned = await t.call('POST', '/v1/learn', {
      task: 'Load sales.csv into JSON rows', code: 'import csv\nrows = list(csv.DictReader(open("sales.csv")))', eval_score: 9,
    });
    const key = learned.json().pattern_key;
    fake.script(() => reply.json({ stages: GOOD }));
    const res = await t.call('POST', '/v1/compose', { task: TASK });
    expect(res.statusCode).toBe(200);
    const pipeline = ComposeResponse.parse(res.json());
    expect(pipeline.task).toBe(TASK);
    expect(pipeline.valid).toBe(true);
    expect(pipeline.contract_errors).toEqual([]);
    expect(pipeline.stages.map((s) => s.name)).toEqual(['load', 'aggregate', 'report']);
    const [load, aggregate] = pipeline.stages;
    expect(load).toMatchObject({ reuse_tier: 'duplicate', pattern_key: key, code: expect.stringContaining('csv.DictReader') });
    expect(load.similarity).toBeGreaterThan(0.99);
    expect(aggregate.similarity).toBeLessThan(load.similarity);
    expect(fake.chatRequests()).toHaveLength(1);
    expect(fake.chatRequests()[0].call!.prompt).toContain(`<task>\n${TASK}\n</task>`);
    // The per-stage recalls were read-only: the stored pattern was not counted as reused.
    const recalled = (await t.call('GET', `/v1/recall?task=${encodeURIComponent('Load sales.csv into JSON rows')}`)).json();
    expect(recalled.matches[0].pattern.reuse_count).toBe(0);
  });
});

describe('compose behaviour', () => {
  it('returns fresh stages with empty code when nothing is stored', async () => {
    t = await startLlmServer(fake);
    fake.script(() => reply.json({ stages: GOOD }));
    const pipeline = (await t.call('POST', '/v1/compose', { task: TASK })).json();
    for (const s of pipeline.stages) expect(s).toMatchObject({ reuse_tier: 'fresh', similarity: 0, code: '', pattern_key: null });
  });

  it.each([
    ['a broken dependency', [stage('a', ['sales.csv'], ['rows.json']), stage('b', ['prices.json'], ['report.md'])], /broken dependency.*prices\.json/],
    ['a cycle through a later stage', [stage('a', ['totals.json'], ['rows.json']), stage('b', ['rows.json'], ['totals.json'])], /cycle.*totals\.json/],
    ['a stage reading its own output', [stage('a', ['sales.csv', 'rows.json'], ['rows.json']), stage('b', ['rows.json'], ['report.md'])], /cycle.*rows\.json/],
    ['a write conflict', [stage('a', ['sales.csv'], ['report.md']), stage('b', ['sales.csv'], ['report.md'])], /conflict.*report\.md/],
  ])('reports %s in contract_errors', async (_label, stages, pattern) => {
    t = await startLlmServer(fake);
    fake.script(() => reply.json({ stages }));
    const res = await t.call('POST', '/v1/compose', { task: TASK });
    expect(res.statusCode).toBe(200);
    const pipeline = res.json();
    expect(pipeline.valid).toBe(false);
    expect(pipeline.contract_errors.some((e: string) => pattern.test(e))).toBe(true);
  });

  it('retries a malformed plan once, then answers 502', async () => {
    t = await startLlmServer(fake);
    fake.enqueue(reply.text('Here is my plan: first load, then report.'));
    fake.script(() => reply.json({ stages: GOOD }));
    expect((await t.call('POST', '/v1/compose', { task: TASK })).statusCode).toBe(200);
    expect(fake.chatRequests()).toHaveLength(2);

    fake.reset();
    // Wrong shape twice: a single stage is not a pipeline.
    fake.script(() => reply.json({ stages: [GOOD[0]] }));
    const res = await t.call('POST', '/v1/compose', { task: TASK });
    expect(res.statusCode).toBe(502);
    expect(res.json().detail).toMatch(/malformed/);
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it('answers 503 when the provider is down and 501 without a provider', async () => {
    t = await startLlmServer(fake);
    fake.script(() => reply.error(503));
    expect((await t.call('POST', '/v1/compose', { task: TASK })).statusCode).toBe(503);
    await t.close();
    t = await startServer();
    expect((await t.call('POST', '/v1/compose', { task: TASK })).statusCode).toBe(501);
  });

  it('rejects a blank task with 422', async () => {
    t = await startLlmServer(fake);
    expect((await t.call('POST', '/v1/compose', { task: '  ' })).statusCode).toBe(422);
    expect(fake.chatRequests()).toHaveLength(0);
  });
});
