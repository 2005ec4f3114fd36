import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { learnBody, startServer, type TestServer } from './helpers.js';

/**
 * Recall's explain parts and tier policies (issue 27) on the bundled model, whose config.json
 * names the calibrated policy. 30 distinct tasks from the calibration set: enough for the
 * project's own adapt threshold (20 or more patterns).
 */
const SET = JSON.parse(readFileSync(new URL('../fixtures/calibration/programming-tasks.json', import.meta.url), 'utf8')) as {
  clusters: { wordings: string[] }[];
  unrelated: string[];
};
const TASKS = SET.clusters.slice(0, 30).map((c) => c.wordings[0]);
/** Many recalls in a row: the rate limits are not what these tests are about. */
const UNLIMITED = { SERVICE_RATE_LIMIT_DEFAULT: '1000000', SERVICE_RATE_LIMIT_EXPENSIVE: '1000000', SERVICE_RATE_LIMIT_PER_KEY: '1000000' };
const EXPLAIN_KEYS = [
  'blended', 'bm25', 'centered_cosine', 'code_bm25', 'cosine', 'eval_factor', 'ngram', 'recency_factor', 'residual_cosine', 'score', 'tier_rule', 'tier_threshold',
];

interface Explained {
  similarity: number;
  score: number;
  reuse_tier: string;
  pattern: { task: string };
  explain: Record<string, number | string | null>;
}

async function fill(t: TestServer): Promise<void> {
  for (const task of TASKS) expect((await t.call('POST', '/v1/learn', learnBody(task))).json().stored).toBe(true);
}

describe('recall explain, calibrated policy', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer(UNLIMITED);
    await fill(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('adds every part to each match and the policy in force to the answer', async () => {
    const res = await t.call('POST', '/v1/recall', { task: SET.clusters[3].wordings[1], limit: 10, readonly: true, explain: true });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.tier_policy).toMatchObject({ policy: 'calibrated', duplicate_threshold: null, source: 'project_fit' });
    expect(body.tier_policy.adapt_threshold).toBeGreaterThan(0);
    expect(body.tier_policy.adapt_threshold).toBeLessThan(1);
    for (const m of body.matches as Explained[]) {
      expect(Object.keys(m.explain).sort()).toEqual(EXPLAIN_KEYS);
      expect(m.explain.score).toBe(m.score);
      expect(m.explain.cosine as number).toBeCloseTo(m.similarity, 6);
      expect(m.explain.score as number).toBeCloseTo((m.explain.blended as number) * (m.explain.eval_factor as number) * (m.explain.recency_factor as number), 9);
      // The tier follows from the rule and its threshold.
      if (m.reuse_tier === 'adapt') {
        expect(m.explain.tier_rule).toBe('centered_adapt');
        expect(m.explain.centered_cosine as number).toBeGreaterThanOrEqual(body.tier_policy.adapt_threshold);
      }
      if (m.reuse_tier === 'fresh') {
        expect(m.explain.tier_rule).toBe('below_adapt');
        expect(m.explain.centered_cosine as number).toBeLessThan(body.tier_policy.adapt_threshold);
      }
    }
    const scores = (body.matches as Explained[]).map((m) => m.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('keeps a stored task asked again with case and spacing changed a duplicate (same text)', async () => {
    const asked = `  ${TASKS[5].toUpperCase().replace(/ /g, '   ')}  `;
    const body = (await t.call('POST', '/v1/recall', { task: asked, readonly: true, explain: true })).json();
    expect(body.matches[0].pattern.task).toBe(TASKS[5]);
    expect(body.matches[0].reuse_tier).toBe('duplicate');
    expect(body.matches[0].explain.tier_rule).toBe('same_text');
  });

  it('never calls a different task a duplicate by similarity alone', async () => {
    for (const c of SET.clusters.slice(0, 30)) {
      for (const lookalike of (c as { lookalikes?: string[] }).lookalikes ?? []) {
        const body = (await t.call('POST', '/v1/recall', { task: lookalike, limit: 3, readonly: true })).json();
        for (const m of body.matches as Explained[]) if (m.pattern.task !== lookalike) expect(m.reuse_tier).not.toBe('duplicate');
      }
    }
  });

  it('answers explain on GET too, and leaves the parts out when not asked', async () => {
    const task = encodeURIComponent(TASKS[2]);
    const res = await t.call('GET', `/v1/recall?task=${task}&explain=true`);
    expect(res.statusCode, res.body).toBe(200);
    const explained = res.json();
    expect(explained.tier_policy.policy).toBe('calibrated');
    expect(Object.keys(explained.matches[0].explain).sort()).toEqual(EXPLAIN_KEYS);
    const plain = (await t.call('GET', `/v1/recall?task=${task}`)).json();
    expect(plain.tier_policy).toBeUndefined();
    expect(plain.matches[0].explain).toBeUndefined();
    expect(plain.matches[0].score).toBe(explained.matches[0].score);
  });

  it('shows the project policy in deep health', async () => {
    const body = (await t.call('GET', '/v1/health/deep')).json();
    expect(body.reuse_tiers).toMatchObject({ policy: 'calibrated', policy_source: 'model_config' });
    expect(body.tier_policy).toMatchObject({ policy: 'calibrated', source: 'project_fit', patterns: TASKS.length, sampled: TASKS.length });
  });
});

describe('recall explain, small project and fixed policy', () => {
  it('uses the model thresholds on raw cosine below the minimum project size', async () => {
    const t = await startServer(UNLIMITED);
    try {
      for (const task of TASKS.slice(0, 5)) await t.call('POST', '/v1/learn', learnBody(task));
      const body = (await t.call('POST', '/v1/recall', { task: SET.clusters[1].wordings[1], readonly: true, explain: true })).json();
      expect(body.tier_policy).toEqual({ policy: 'calibrated', duplicate_threshold: null, adapt_threshold: 0.76, source: 'small_project_fallback' });
      for (const m of body.matches as Explained[]) expect(m.explain.centered_cosine).toBe(m.explain.cosine);
    } finally {
      await t.close();
    }
  });

  it('SERVICE_TIER_POLICY=fixed puts the thresholds back on the cosine', async () => {
    const t = await startServer({ ...UNLIMITED, SERVICE_TIER_POLICY: 'fixed' });
    try {
      await fill(t);
      const body = (await t.call('POST', '/v1/recall', { task: SET.clusters[3].wordings[1], limit: 10, readonly: true, explain: true })).json();
      expect(body.tier_policy).toEqual({ policy: 'fixed', duplicate_threshold: 0.98, adapt_threshold: 0.76, source: 'model_config' });
      for (const m of body.matches as Explained[]) {
        const expected = m.similarity >= 0.98 ? 'duplicate' : m.similarity >= 0.76 ? 'adapt' : 'fresh';
        expect(m.reuse_tier).toBe(expected);
      }
    } finally {
      await t.close();
    }
  });
});
