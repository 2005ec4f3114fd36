import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createApp } from '../../src/app.js';
import { RecallResponse } from '../../src/contracts/memory.js';
import { reply, type ChatCall } from '../fixtures/fake-llm/server.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import { startServer, testConfig, type TestServer } from '../api/helpers.js';
import { tempDir } from '../support/env.js';
import { PROVIDERS, startLlmServer } from './helpers.js';

const fake = await useFakeLlm();
let t: TestServer | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const CSV = 'Parse a CSV file and return the sum of one numeric column';
const CSV_ROWS = 'Parse a CSV file and return the rows where one numeric column is empty';
/** Thresholds that make both stored CSV tasks reusable for a CSV query with the offline model. */
const TIERS = { SERVICE_TIER_DUPLICATE: '0.99', SERVICE_TIER_ADAPT: '0.3' };

/** Stored task of each numbered candidate in a verification prompt. */
function candidatesOf(call: ChatCall): string[] {
  return [...call.prompt.matchAll(/Candidate \d+:\n<stored_task>\n([\s\S]*?)\n<\/stored_task>/g)].map((m) => m[1]);
}

/** Answers each candidate with the verdict chosen for its stored task. */
function verdicts(byTask: Record<string, string>): void {
  fake.script((call) => reply.json({
    verdicts: candidatesOf(call).map((task, i) => ({ candidate: i + 1, verdict: byTask[task], reason: `judged ${byTask[task]}` })),
  }));
}

async function learnBoth(s: TestServer): Promise<{ sum: string; rows: string }> {
  const sum = (await s.call('POST', '/v1/learn', { task: CSV, code: 'total = sum(float(r[col]) for r in csv.DictReader(f))', eval_score: 8 })).json().pattern_key;
  const rows = (await s.call('POST', '/v1/learn', { task: CSV_ROWS, code: 'empty = [r for r in csv.DictReader(f) if not r[col]]', eval_score: 8 })).json().pattern_key;
  return { sum, rows };
}

async function recallVerified(s: TestServer, extra: Record<string, unknown> = {}) {
  const res = await s.call('POST', '/v1/recall', { task: CSV, verify: true, ...extra });
  expect(res.statusCode).toBe(200);
  return RecallResponse.parse(res.json());
}

describe.each(PROVIDERS)('verified recall (%s)', (provider) => {
  it('lowers tiers with one call for the whole page, never raises one, and caches the verdicts', async () => {
    t = await startLlmServer(fake, provider, TIERS);
    const keys = await learnBoth(t);
    // The exact task is a duplicate by similarity; the LLM says it solves the task only with
    // changes. The other is adapt by similarity; the LLM calls it a duplicate: it stays adapt.
    verdicts({ [CSV]: 'adapt', [CSV_ROWS]: 'duplicate' });
    const first = await recallVerified(t);
    const byKey = new Map(first.matches.map((m) => [m.pattern_key, m]));
    expect(byKey.get(keys.sum)).toMatchObject({ reuse_tier: 'adapt', verification: { verdict: 'adapt', reason: 'judged adapt', model: t.app.deps.llm!.model } });
    expect(byKey.get(keys.sum)!.similarity).toBeGreaterThanOrEqual(0.99);
    expect(byKey.get(keys.rows)).toMatchObject({ reuse_tier: 'adapt', verification: { verdict: 'duplicate' } });
    expect(first.warnings).toBeUndefined();

    const chats = fake.chatRequests();
    expect(chats).toHaveLength(1);
    const call = chats[0].call!;
    // The provider's own request shape: OpenAI asks for a JSON object, Anthropic puts the system prompt apart.
    expect(call.api).toBe(provider === 'provider_a' ? 'openai' : 'anthropic');
    if (provider === 'provider_a') expect(call.json).toBe(true);
    else expect((chats[0].body as { system?: unknown }).system).toBeTruthy();
    expect(call.system).toMatch(/"duplicate" when the stored code solves the new task as it is/);
    expect(call.prompt).toContain(`<task>\n${CSV}\n</task>`);
    expect(candidatesOf(call).sort()).toEqual([CSV, CSV_ROWS].sort());
    expect(call.prompt).toContain('csv.DictReader(f) if not r[col]');

    // Same task, same patterns: verdicts come from the cache, no second call.
    const again = await recallVerified(t, { readonly: true });
    expect(fake.chatRequests()).toHaveLength(1);
    expect(again.matches.map((m) => [m.pattern_key, m.reuse_tier, m.verification?.verdict])).toEqual(
      first.matches.map((m) => [m.pattern_key, m.reuse_tier, m.verification?.verdict]),
    );
    const metrics = await t.app.metrics.render();
    expect(metrics).toMatch(/service_reuse_verify_calls_total\{outcome="ok"\} 1/);
    expect(metrics).toMatch(/service_reuse_verify_verdicts_total\{verdict="adapt"\} 1/);
    expect(metrics).toMatch(/service_reuse_verify_cache_hits_total 2/);
  });
});

describe('verified recall: limits, failures and configuration', () => {
  it('a verdict of fresh means no reuse is counted', async () => {
    t = await startLlmServer(fake, 'provider_a', TIERS);
    const keys = await learnBoth(t);
    verdicts({ [CSV]: 'duplicate', [CSV_ROWS]: 'fresh' });
    const res = await recallVerified(t);
    expect(res.matches.find((m) => m.pattern_key === keys.rows)).toMatchObject({ reuse_tier: 'fresh', verification: { verdict: 'fresh' } });
    const after = RecallResponse.parse((await t.call('POST', '/v1/recall', { task: CSV, readonly: true })).json());
    expect(after.matches.find((m) => m.pattern_key === keys.rows)!.pattern.reuse_count).toBe(0);
    expect(after.matches.find((m) => m.pattern_key === keys.sum)!.pattern.reuse_count).toBe(1);
  });

  it('sends at most SERVICE_RECALL_VERIFY_MAX candidates and says the rest were not verified', async () => {
    t = await startLlmServer(fake, 'provider_a', { ...TIERS, SERVICE_RECALL_VERIFY_MAX: '1' });
    await learnBoth(t);
    verdicts({ [CSV]: 'duplicate', [CSV_ROWS]: 'adapt' });
    const res = await recallVerified(t);
    expect(candidatesOf(fake.chatRequests()[0].call!)).toHaveLength(1);
    const [best, second] = res.matches;
    expect(best.verification).not.toBeNull();
    expect(second.verification).toBeNull();
    expect(second.reuse_tier).toBe('adapt');
    expect(res.warnings).toEqual([expect.stringContaining('SERVICE_RECALL_VERIFY_MAX')]);
  });

  it.each([
    ['an LLM failure', () => fake.enqueue(reply.error(400, { message: 'bad request' }))],
    ['an unreadable answer', () => fake.enqueue(reply.text('I think they are all fine.'))],
    ['verdicts outside the allowed words', () => fake.enqueue(reply.json({ verdicts: [{ candidate: 1, verdict: 'maybe' }] }))],
  ])('%s leaves the tiers as similarity gave them, with a warning', async (_name, arrange) => {
    t = await startLlmServer(fake, 'provider_a', TIERS);
    await learnBoth(t);
    const plain = RecallResponse.parse((await t.call('POST', '/v1/recall', { task: CSV, readonly: true })).json());
    arrange();
    const res = await recallVerified(t, { readonly: true });
    expect(fake.chatRequests()).toHaveLength(1);
    expect(res.matches.map((m) => [m.pattern_key, m.reuse_tier])).toEqual(plain.matches.map((m) => [m.pattern_key, m.reuse_tier]));
    expect(res.matches.every((m) => m.verification === null)).toBe(true);
    expect(res.warnings).toEqual([expect.stringMatching(/^verification failed/)]);
  });

  it('answers 422 naming SERVICE_LLM_PROVIDER when no LLM is configured', async () => {
    t = await startServer();
    const res = await t.call('POST', '/v1/recall', { task: CSV, verify: true });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(/SERVICE_LLM_PROVIDER/);
  });

  it('SERVICE_RECALL_VERIFY makes verification the default, and verify: false opts out', async () => {
    t = await startLlmServer(fake, 'provider_a', { ...TIERS, SERVICE_RECALL_VERIFY: 'true' });
    await learnBoth(t);
    verdicts({ [CSV]: 'duplicate', [CSV_ROWS]: 'adapt' });
    const off = RecallResponse.parse((await t.call('POST', '/v1/recall', { task: CSV, verify: false })).json());
    expect(fake.chatRequests()).toHaveLength(0);
    expect(off.matches[0].verification).toBeUndefined();
    const on = RecallResponse.parse((await t.call('POST', '/v1/recall', { task: CSV })).json());
    expect(fake.chatRequests()).toHaveLength(1);
    expect(on.matches[0].verification).not.toBeUndefined();
  });

  it('refuses to start with SERVICE_RECALL_VERIFY=true and no LLM', async () => {
    const dir = await tempDir();
    try {
      await expect(createApp(testConfig(dir.path, { SERVICE_RECALL_VERIFY: 'true' }))).rejects.toThrow(/SERVICE_RECALL_VERIFY: .*SERVICE_LLM_PROVIDER/);
    } finally {
      await dir.remove();
    }
  });

  it('rejects a bad SERVICE_RECALL_VERIFY_MAX at startup', () => {
    expect(() => loadConfig({ SERVICE_RECALL_VERIFY_MAX: '0' })).toThrow(/SERVICE_RECALL_VERIFY_MAX/);
  });
});

describe('verified recall: cache follows the pattern content', () => {
  it('judges a pattern again once a better run replaced its code', async () => {
    t = await startLlmServer(fake, 'provider_a', TIERS);
    await learnBoth(t);
    verdicts({ [CSV]: 'duplicate', [CSV_ROWS]: 'adapt' });
    await recallVerified(t);
    await recallVerified(t);
    expect(fake.chatRequests()).toHaveLength(1);
    // Same task, higher score: the near-identical pattern's code is replaced in place.
    const relearned = await t.call('POST', '/v1/learn', { task: CSV, code: 'import pandas as pd\ntotal = pd.read_csv(f)[col].sum()', eval_score: 9.5 });
    expect(relearned.json().stored).toBe(true);
    await recallVerified(t);
    expect(fake.chatRequests()).toHaveLength(2);
    expect(candidatesOf(fake.chatRequests()[1].call!)).toEqual([CSV]);
  });
});
