import { afterEach, describe, expect, it } from 'vitest';
import { AnalyzeFailuresResponse, FeedbackResponse } from '../../src/contracts/llm.js';
import type { FeedbackCluster } from '../../src/core/types.js';
import { recordFeedback } from '../../src/services/feedback.js';
import { ManualClock, startServer, type TestServer } from '../api/helpers.js';

/**
 * The feedback store and analyze-failures need no LLM: these run with SERVICE_LLM_PROVIDER=none
 * and the offline embedding model (a static model: paraphrases score ~0.7, so the failure
 * cluster threshold is tuned for it exactly like the reuse tiers are).
 */

let t: TestServer | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const SCOPE = { tenant_id: 'default', project_id: 'default' };
const WEEK = 7 * 24 * 3600 * 1000;

function cluster(id: string, text: string, count: number, score: number, extra: Partial<FeedbackCluster> = {}): FeedbackCluster {
  return { id, text, count, score, last_seen: '2025-01-01T00:00:00.000Z', last_decayed_at: null, tasks: [], ...extra };
}

describe('GET /v1/feedback', () => {
  it('lists recurring issues by score × count, filtered by task_type and paged', async () => {
    t = await startServer();
    await t.app.deps.storage.feedback.upsert(SCOPE, [
      cluster('a', 'Validate the CSV header row.', 2, 0.6, { tasks: ['Parse a CSV export'] }),
      cluster('b', 'Close the database connection.', 4, 0.9),
      cluster('c', 'Use parameterised SQL queries.', 3, 0.5),
      cluster('d', 'Seen only once.', 1, 1),
    ]);
    const all = FeedbackResponse.parse((await t.call('GET', '/v1/feedback')).json());
    expect(all.feedback.map((f) => f.text)).toEqual(['Close the database connection.', 'Use parameterised SQL queries.', 'Validate the CSV header row.']);
    expect(all.feedback[0]).toEqual({ text: 'Close the database connection.', count: 4, score: 0.9, last_seen: '2025-01-01T00:00:00.000Z' });
    expect(all).toMatchObject({ has_more: false, next_offset: null });

    const page = (await t.call('GET', '/v1/feedback?limit=1&offset=1')).json();
    expect(page.feedback.map((f: { text: string }) => f.text)).toEqual(['Use parameterised SQL queries.']);
    expect(page).toMatchObject({ has_more: true, next_offset: 2 });

    const csv = (await t.call('GET', '/v1/feedback?task_type=csv')).json();
    expect(csv.feedback.map((f: { text: string }) => f.text)).toEqual(['Validate the CSV header row.']);
    const viaTask = (await t.call('GET', '/v1/feedback?task_type=EXPORT')).json();
    expect(viaTask.feedback).toHaveLength(1);
  });

  it.each(['limit=0', 'limit=101', 'offset=-1', 'limit=abc', 'surprise=1'])('rejects ?%s with 422', async (query) => {
    t = await startServer();
    expect((await t.call('GET', `/v1/feedback?${query}`)).statusCode).toBe(422);
  });
});

describe('POST /v1/feedback/decay', () => {
  it('decays ×0.9 per week since last decay and prunes below 0.15', async () => {
    const clock = new ManualClock(new Date('2025-01-01T00:00:00.000Z'));
    t = await startServer({}, { clock });
    await t.app.deps.storage.feedback.upsert(SCOPE, [cluster('strong', 'Strong issue.', 5, 1), cluster('weak', 'Weak issue.', 2, 0.16)]);
    clock.advance(2 * WEEK);
    const res = await t.call('POST', '/v1/feedback/decay');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ decayed: 1, pruned: 1 });
    const [left] = await t.app.deps.storage.feedback.list(SCOPE);
    expect(left.id).toBe('strong');
    expect(left.score).toBeCloseTo(0.81, 10);
    // Running it again at the same instant changes nothing.
    expect((await t.call('POST', '/v1/feedback/decay')).json()).toEqual({ decayed: 1, pruned: 0 });
    expect((await t.app.deps.storage.feedback.list(SCOPE))[0].score).toBeCloseTo(0.81, 10);
  });
});

describe('feedback store cap', () => {
  it('keeps at most 500 clusters per scope, evicting the least important', async () => {
    t = await startServer();
    const many = Array.from({ length: 500 }, (_, i) => cluster(`c${i}`, `issue number ${i} token${i}`, i === 0 ? 1 : 3, 0.5));
    await t.app.deps.storage.feedback.upsert(SCOPE, many);
    await recordFeedback(t.app.deps, SCOPE, ['A completely new quality problem appeared.'], null);
    const after = await t.app.deps.storage.feedback.list(SCOPE);
    expect(after).toHaveLength(500);
    // The weakest (score × count = 0.5) lost against the newcomer (0.5, but seen more recently).
    expect(after.some((c) => c.id === 'c0')).toBe(false);
    expect(after.some((c) => c.text === 'A completely new quality problem appeared.')).toBe(true);
  });
});

describe('POST /v1/analyze-failures', () => {
  // Pairs chosen for the offline model: paraphrases share at most two words (so the feedback
  // store keeps them apart) yet embed at cosine ≥ 0.71; across groups cosine stays ≤ 0.57.
  const INPUT = ['Validate user input before processing it.', 'User input is processed without any validation.'];
  const DISK = ['Handle exceptions when reading files from disk.', 'Errors from disk reads are not caught.', 'Exceptions thrown by disk reads are never handled.'];
  const NAMES = 'Use descriptive variable names.';

  it('groups paraphrased failures that share few words', async () => {
    t = await startServer({ SERVICE_FAILURE_CLUSTER_THRESHOLD: '0.65' });
    await recordFeedback(t.app.deps, SCOPE, [...INPUT, ...DISK, NAMES], 'task');
    await recordFeedback(t.app.deps, SCOPE, [DISK[1], INPUT[0]], 'task');
    // Recorded as six separate issues: lexically they barely overlap.
    expect(await t.app.deps.storage.feedback.list(SCOPE)).toHaveLength(6);

    const res = await t.call('POST', '/v1/analyze-failures', {});
    expect(res.statusCode).toBe(200);
    const { clusters } = AnalyzeFailuresResponse.parse(res.json());
    expect(clusters).toHaveLength(3);
    const [disk, input, names] = clusters;
    expect(new Set(disk.members)).toEqual(new Set(DISK));
    expect(disk).toMatchObject({ representative: DISK[1], total_count: 4 });
    expect(new Set(input.members)).toEqual(new Set(INPUT));
    expect(input).toMatchObject({ representative: INPUT[0], total_count: 3 });
    expect(names).toMatchObject({ representative: NAMES, members: [NAMES], total_count: 1, avg_score: 0.5 });
  });

  it('honours min_count and works with an empty body and no LLM', async () => {
    t = await startServer({ SERVICE_FAILURE_CLUSTER_THRESHOLD: '0.65' });
    await recordFeedback(t.app.deps, SCOPE, [...DISK, NAMES], null);
    await recordFeedback(t.app.deps, SCOPE, [DISK[0]], null);
    const filtered = (await t.call('POST', '/v1/analyze-failures', { min_count: 2 })).json();
    expect(filtered.clusters).toEqual([{ representative: DISK[0], members: [DISK[0]], total_count: 2, avg_score: 0.6 }]);
    const noBody = await t.call('POST', '/v1/analyze-failures');
    expect(noBody.statusCode).toBe(200);
    expect(noBody.json().clusters).toHaveLength(2);
    expect((await t.call('POST', '/v1/analyze-failures', { min_count: 0 })).statusCode).toBe(422);
  });

  it('answers an empty list when nothing was recorded', async () => {
    t = await startServer();
    expect((await t.call('POST', '/v1/analyze-failures', {})).json()).toEqual({ clusters: [] });
  });
});
