import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CachedEmbedder } from '../../src/adapters/embeddings/cache.js';
import { learnBody, startServer, type TestServer } from './helpers.js';

const CSV_TASK = 'Parse a CSV file from disk and compute the average value of the numeric price column for every row';

describe('learn → recall on the embedded default', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('learns a pattern and recalls it as a duplicate with the spec fields', async () => {
    const learned = await t.call('POST', '/v1/learn', learnBody(CSV_TASK, { eval_score: 9 }));
    expect(learned.statusCode).toBe(200);
    const body = learned.json();
    expect(body).toMatchObject({ stored: true, pattern_count: 1 });
    expect(body.pattern_key).toMatch(/^patterns\/[0-9a-z]+$/);
    expect(body).not.toHaveProperty('redacted');

    const recalled = await t.call('POST', '/v1/recall', { task: CSV_TASK });
    expect(recalled.statusCode).toBe(200);
    expect(recalled.headers['x-recall-mode']).toBeUndefined();
    const { matches, has_more, next_offset } = recalled.json();
    expect(has_more).toBe(false);
    expect(next_offset).toBeNull();
    expect(matches).toHaveLength(1);
    expect(matches[0]).toMatchObject({ reuse_tier: 'duplicate', pattern_key: body.pattern_key });
    expect(matches[0].similarity).toBeGreaterThan(0.99);
    expect(matches[0].similarity).toBeLessThanOrEqual(1);
    expect(matches[0].pattern).toEqual({
      task: CSV_TASK, code: expect.stringContaining('solution for'), success_score: 9, reuse_count: 0,
    });
    // score = similarity × quality factor (0.5 + 0.05 × 9).
    expect(matches[0].score).toBeCloseTo(matches[0].similarity * 0.95, 6);
  });

  it('counts a POST recall as a reuse, but not GET recall or readonly', async () => {
    const get = await t.call('GET', `/v1/recall?task=${encodeURIComponent(CSV_TASK)}&limit=3`);
    expect(get.statusCode).toBe(200);
    const before = get.json().matches[0].pattern;

    await t.call('POST', '/v1/recall', { task: CSV_TASK, readonly: true });
    const afterReadonly = (await t.call('GET', `/v1/recall?task=${encodeURIComponent(CSV_TASK)}`)).json().matches[0].pattern;
    expect(afterReadonly.reuse_count).toBe(before.reuse_count);
    expect(afterReadonly.success_score).toBe(before.success_score);

    await t.call('POST', '/v1/recall', { task: CSV_TASK });
    const after = (await t.call('GET', `/v1/recall?task=${encodeURIComponent(CSV_TASK)}`)).json().matches[0].pattern;
    expect(after.reuse_count).toBe(before.reuse_count + 1);
    expect(after.success_score).toBeCloseTo(Math.min(10, before.success_score + 0.1), 6);
  });

  it('does not re-embed the same task on a second recall (LRU cache)', async () => {
    const task = 'Convert a markdown document into sanitized HTML with a table of contents';
    await t.call('POST', '/v1/recall', { task });
    const cache = t.app.deps.embedder as CachedEmbedder;
    const first = cache.stats();
    await t.call('POST', '/v1/recall', { task });
    const second = cache.stats();
    expect(second.misses).toBe(first.misses);
    expect(second.hits).toBe(first.hits + 1);
  });

  it('treats a near-identical learn as the same pattern: observation added, replaced only when better', async () => {
    const task = 'Send an HTTP GET request to the billing API and retry three times on network failure with exponential backoff';
    const first = (await t.call('POST', '/v1/learn', learnBody(task, { eval_score: 6, code: 'v1' }))).json();
    expect(first.stored).toBe(true);

    // One extra word: token Jaccard ≥ 0.92 and the same meaning.
    const variant = `${task} please`;
    const worse = (await t.call('POST', '/v1/learn', learnBody(variant, { eval_score: 5, code: 'v2' }))).json();
    expect(worse).toMatchObject({ stored: false, pattern_count: first.pattern_count, pattern_key: first.pattern_key });

    const better = (await t.call('POST', '/v1/learn', learnBody(variant, { eval_score: 9, code: 'v3' }))).json();
    expect(better).toMatchObject({ stored: true, pattern_count: first.pattern_count, pattern_key: first.pattern_key });

    const match = (await t.call('POST', '/v1/recall', { task, readonly: true, limit: 1 })).json().matches[0];
    expect(match.pattern_key).toBe(first.pattern_key);
    expect(match.pattern).toMatchObject({ code: 'v3', success_score: 9 });
    // Observations 6, 5, 9 → median 6 → quality factor 0.8.
    expect(match.score).toBeCloseTo(match.similarity * 0.8, 6);
  });

  it('redacts secrets before storage and audits counts, never values', async () => {
    const res = await t.call('POST', '/v1/learn', learnBody('Email the weekly report to ops@example.com from 10.1.2.3', {
      code: 'const password = "hunter2hunter2"; // password=hunter2hunter2\nsend("ops@example.com")',
    }));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ stored: true, redacted: true });

    const exported = (await t.call('GET', '/v1/export')).json();
    const record = exported.records.find((r: { key: string }) => r.key === res.json().pattern_key);
    expect(record.redacted).toBe(true);
    expect(record.task).toContain('[REDACTED]');
    expect(record.task).not.toContain('ops@example.com');
    expect(record.task).not.toContain('10.1.2.3');
    expect(record.code).not.toContain('hunter2hunter2');

    const events = await t.app.deps.storage.audit.list({ kind: 'PII_REDACTED', limit: 10 });
    expect(events).toHaveLength(1);
    expect(events[0].detail.counts).toMatchObject({ email: 2, ipv4: 1, keyword_secret: expect.any(Number) });
    expect(JSON.stringify(events[0])).not.toMatch(/ops@example\.com|10\.1\.2\.3|hunter2/);
  });

  it('reports per-scope metrics', async () => {
    const res = await t.call('GET', '/v1/metrics');
    expect(res.statusCode).toBe(200);
    const m = res.json();
    expect(m.runs).toBe(5);
    expect(m.pattern_count).toBe(3);
    expect(m.success_rate).toBeCloseTo(5 / 5, 6);
    expect(m.avg_eval_score).toBeCloseTo((9 + 6 + 5 + 9 + 8) / 5, 6);
    expect(m.reuse_rate).toBeGreaterThan(0);
    expect(m.reuse_rate).toBeLessThanOrEqual(1);
  });

  it('tags patterns with skills and finds them', async () => {
    const key = (await t.call('POST', '/v1/learn', learnBody('Build a Docker image for a Node service and push it to a registry'))).json().pattern_key;
    const reg = await t.call('POST', '/v1/skills/register', { pattern_key: key, skills: [' Docker ', 'node', 'DOCKER'] });
    expect(reg.statusCode).toBe(200);
    expect(reg.json()).toEqual({ pattern_key: key, skills: ['docker', 'node'], registered: 2 });

    const any = (await t.call('POST', '/v1/skills/search', { skills: ['docker', 'python'] })).json();
    expect(any.count).toBe(1);
    expect(any.matches[0]).toMatchObject({ pattern_key: key, skills: ['docker', 'node'] });
    const all = (await t.call('POST', '/v1/skills/search', { skills: ['docker', 'python'], match_all: true })).json();
    expect(all).toEqual({ matches: [], count: 0 });

    const missing = await t.call('POST', '/v1/skills/register', { pattern_key: 'patterns/zzzzzzzz', skills: ['x'] });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ detail: expect.stringContaining('patterns/zzzzzzzz'), request_id: expect.any(String) });
  });

  it('deletes a pattern by its %2F-encoded key, with its tags', async () => {
    const key = (await t.call('POST', '/v1/learn', learnBody('Rotate the TLS certificates of the staging load balancer'))).json().pattern_key;
    await t.call('POST', '/v1/skills/register', { pattern_key: key, skills: ['tls'] });
    const del = await t.call('DELETE', `/v1/patterns/${encodeURIComponent(key)}`);
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({ deleted: true, pattern_key: key });
    expect((await t.call('POST', '/v1/skills/search', { skills: ['tls'] })).json().count).toBe(0);
    const again = await t.call('DELETE', `/v1/patterns/${encodeURIComponent(key)}`);
    expect(again.statusCode).toBe(404);
    const audit = await t.app.deps.storage.audit.list({ kind: 'PATTERN_DELETED', limit: 5 });
    expect(audit[0].detail).toEqual({ pattern_key: key });
  });
});

describe('recall paging and dedup', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('pages with offset/limit and groups near-duplicate tasks', async () => {
    const base = 'Resize every JPEG image in the uploads folder to a thumbnail of width';
    for (const width of [64, 128, 256]) {
      const res = await t.call('POST', '/v1/learn', learnBody(`${base} ${width} pixels`, { eval_score: 7 }));
      expect(res.json().stored).toBe(true);
    }
    for (const task of ['Compress old log files into a gzip archive every night', 'Validate a JSON payload against a schema']) {
      await t.call('POST', '/v1/learn', learnBody(task));
    }

    const all = (await t.call('POST', '/v1/recall', { task: `${base} 100 pixels`, limit: 50, deduplicate: false, readonly: true })).json();
    expect(all.matches).toHaveLength(5);
    expect(all.has_more).toBe(false);
    const scores = all.matches.map((m: { score: number }) => m.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);

    const deduped = (await t.call('POST', '/v1/recall', { task: `${base} 100 pixels`, limit: 50, readonly: true })).json();
    const thumbs = deduped.matches.filter((m: { pattern: { task: string } }) => m.pattern.task.startsWith(base));
    expect(thumbs).toHaveLength(1);
    expect(thumbs[0].pattern_key).toBe(all.matches[0].pattern_key);
    expect(deduped.matches).toHaveLength(3);

    const page1 = (await t.call('POST', '/v1/recall', { task: `${base} 100 pixels`, limit: 2, deduplicate: false, readonly: true })).json();
    expect(page1.has_more).toBe(true);
    expect(page1.next_offset).toBe(2);
    const page2 = (await t.call('POST', '/v1/recall', { task: `${base} 100 pixels`, limit: 2, offset: 2, deduplicate: false, readonly: true })).json();
    const page3 = (await t.call('POST', '/v1/recall', { task: `${base} 100 pixels`, limit: 2, offset: 4, deduplicate: false, readonly: true })).json();
    expect(page3).toMatchObject({ has_more: false, next_offset: null });
    const keys = [...page1.matches, ...page2.matches, ...page3.matches].map((m: { pattern_key: string }) => m.pattern_key);
    expect(keys).toEqual(all.matches.map((m: { pattern_key: string }) => m.pattern_key));
  });

  it('applies filters inside the search', async () => {
    await t.call('POST', '/v1/learn', learnBody('Publish release notes to the public changelog page', { classification: 'public', source: 'cli', eval_score: 3 }));
    const pub = (await t.call('POST', '/v1/recall', { task: 'Publish release notes', classification: 'public', limit: 50, readonly: true })).json();
    expect(pub.matches).toHaveLength(1);
    expect(pub.matches[0].pattern.task).toContain('changelog');
    const cli = (await t.call('GET', '/v1/recall?task=notes&source=cli&limit=50')).json();
    expect(cli.matches).toHaveLength(1);
    const minScore = (await t.call('POST', '/v1/recall', { task: 'Publish release notes', min_score: 5, limit: 50, readonly: true })).json();
    expect(minScore.matches.every((m: { pattern: { success_score: number } }) => m.pattern.success_score >= 5)).toBe(true);
    expect(minScore.matches.some((m: { pattern: { task: string } }) => m.pattern.task.includes('changelog'))).toBe(false);
  });

  it('ranks by the hybrid blend alone when eval_weighted is false', async () => {
    const res = (await t.call('POST', '/v1/recall', { task: 'Compress log files', eval_weighted: false, limit: 50, readonly: true, explain: true })).json();
    expect(res.matches.length).toBeGreaterThan(1);
    for (const m of res.matches) {
      expect(m.explain.eval_factor).toBe(1);
      expect(m.score).toBe(m.explain.blended);
      expect(m.explain.cosine).toBeCloseTo(m.similarity, 6);
    }
    const scores = res.matches.map((m: { score: number }) => m.score);
    expect(scores).toEqual([...scores].sort((x, y) => y - x));
  });
});

describe('recall widening', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('widens the search when dedup collapses the first candidates', async () => {
    const base = 'Resize every JPEG image in the uploads folder to a thumbnail of width';
    // 14 near-duplicates (Jaccard 0.875: grouped by recall, yet distinct patterns at learn).
    for (let i = 1; i <= 14; i++) expect((await t.call('POST', '/v1/learn', learnBody(`${base} ${i * 10} pixels`))).json().stored).toBe(true);
    const others = ['Upload the generated images to a CDN bucket', 'Delete temporary files from the uploads folder', 'Convert PNG screenshots to WebP'];
    for (const task of others) await t.call('POST', '/v1/learn', learnBody(task));

    const res = (await t.call('POST', '/v1/recall', { task: `${base} 999 pixels`, limit: 3, readonly: true })).json();
    expect(res.matches).toHaveLength(3);
    expect(res.matches.filter((m: { pattern: { task: string } }) => m.pattern.task.startsWith(base))).toHaveLength(1);
    expect(res.has_more).toBe(true);
    expect(res.next_offset).toBe(3);
    const rest = (await t.call('POST', '/v1/recall', { task: `${base} 999 pixels`, limit: 3, offset: 3, readonly: true })).json();
    expect(rest).toMatchObject({ has_more: false, next_offset: null });
    const seen = [...res.matches, ...rest.matches].map((m: { pattern: { task: string } }) => m.pattern.task);
    for (const task of others) expect(seen).toContain(task);
  });
});
