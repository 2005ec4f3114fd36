/**
 * A deduplicated recall's work is bounded by its page's end, and the deepest page it serves is
 * MAX_DEDUP_PAGE_END: dedup compares each candidate with every match kept so far, so a page at
 * offset 9,950 kept ~10,000 matches and cost seconds of CPU (`npm run bench -- --dedup`).
 * Deeper deduplicated pages answer 422 naming `offset` before any search; without dedup every
 * offset the specification allows is served. The comparisons dedup makes are counted, never
 * timed. Both storages (PostgreSQL when it is reachable), over distinct tasks (nearly every
 * candidate survives: the costly case).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDistinctTasks } from '../../bench/distinct-tasks.js';
import { firstFetch, MAX_DEDUP_PAGE_END, NearDuplicateFilter } from '../../src/core/dedup.js';
import { requirePostgres } from '../support/pg.js';
import { jsonHarness, pgHarness, type Harness } from './both-storages.js';
import { perFileDatabase } from './db-auth-helpers.js';

const PATTERNS = 1_500;
const SCOPE = { tenant_id: 'default', project_id: 'default' };

// Every comparison NearDuplicateFilter makes in this process, and the searches it ran on.
const work = { comparisons: 0, searches: 0 };
const offer = NearDuplicateFilter.prototype.offer;
NearDuplicateFilter.prototype.offer = function (this: NearDuplicateFilter<unknown>, item: unknown) {
  const before = this.comparisons;
  const kept = offer.call(this, item);
  work.comparisons += this.comparisons - before;
  return kept;
};

const hasPg = await requirePostgres('deduplicated recall depth on PostgreSQL');
const database = perFileDatabase('recalldepth');
afterAll(async () => {
  await database.drop();
});
const HARNESSES: [string, () => Promise<Harness>][] = [['json', () => jsonHarness()]];
if (hasPg) HARNESSES.push(['postgres', () => pgHarness(database)]);

describe.each(HARNESSES)('deduplicated recall: bounded depth (%s)', (_name, start) => {
  let t: Harness;
  let query: string;

  beforeAll(async () => {
    t = await start();
    query = await seedDistinctTasks(t.app.deps.storage, t.app.deps.embedder, SCOPE, PATTERNS);
    const patterns = t.app.deps.storage.patterns;
    const hybrid = patterns.hybridCandidates.bind(patterns);
    patterns.hybridCandidates = (scope, q) => {
      work.searches++;
      return hybrid(scope, q);
    };
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  async function recall(method: 'GET' | 'POST', params: Record<string, string | number | boolean>) {
    work.comparisons = 0;
    work.searches = 0;
    const body = { task: query, ...params };
    const res = method === 'POST'
      ? await t.call('POST', '/v1/recall', { ...body, readonly: true })
      : await t.call('GET', `/v1/recall?${new URLSearchParams(Object.entries(body).map(([k, v]): [string, string] => [k, String(v)]))}`);
    return { res, comparisons: work.comparisons, searches: work.searches };
  }

  it.each(['GET', 'POST'] as const)('%s: a deduplicated page past the cap is 422 naming offset, before any search', async (method) => {
    const { res, comparisons, searches } = await recall(method, { offset: 9_950, limit: 50 });
    expect(res.statusCode, res.body).toBe(422);
    const body = res.json();
    expect(body).toMatchObject({ code: 'validation_failed', request_id: res.headers['x-request-id'] });
    expect(body.detail).toContain(`offset + limit = ${MAX_DEDUP_PAGE_END}`);
    expect(body.errors.map((e: { path: string }) => e.path)).toEqual(['offset']);
    expect({ comparisons, searches }).toEqual({ comparisons: 0, searches: 0 });
    // One past the cap, at any limit.
    expect((await recall(method, { offset: MAX_DEDUP_PAGE_END - 4, limit: 5 })).res.statusCode).toBe(422);
  });

  it('serves the deepest deduplicated page, its comparisons bounded by candidates × the page end', async () => {
    const { res, comparisons, searches } = await recall('GET', { offset: MAX_DEDUP_PAGE_END - 50, limit: 50 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().matches).toHaveLength(50);
    expect(searches).toBeGreaterThan(0);
    // Each candidate of the one fetch (the scope here) meets at most the page end plus one kept matches.
    expect(comparisons).toBeLessThanOrEqual(Math.min(PATTERNS, firstFetch(MAX_DEDUP_PAGE_END)) * (MAX_DEDUP_PAGE_END + 1));
  });

  it('without dedup, every offset the specification allows is served, with no comparison', async () => {
    const { res, comparisons } = await recall('GET', { offset: 9_950, limit: 50, deduplicate: false });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ matches: [], has_more: false, next_offset: null });
    expect(comparisons).toBe(0);
    const shallow = await recall('POST', { offset: PATTERNS - 10, limit: 50, deduplicate: false });
    expect(shallow.res.json().matches).toHaveLength(10);
  });
});
