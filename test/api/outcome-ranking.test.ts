/**
 * Ranking that remembers (docs/behavior.md "Outcome ranking") through the HTTP API on both
 * storages: a failure on an exact wording moves the failing pattern below the alternatives
 * and off `duplicate` (and lets dedup keep the alternative it used to hide); a failure for one
 * problem's wording does not demote the pattern for its own problem's asks; a success on one
 * wording does not move the pattern for other wordings; SERVICE_OUTCOME_RANKING=off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '../support/pg.js';
import { jsonHarness, pgHarness, type Harness } from './both-storages.js';
import { perFileDatabase } from './db-auth-helpers.js';
import { learnBody } from './helpers.js';

const hasPg = await requirePostgres('outcome ranking');
const database = perFileDatabase('outrank');

const FILLERS = [
  'parse a csv file into a list of dictionaries',
  'send an http get request and print the status code',
  'compute the factorial of a number recursively',
  'read a json configuration file from disk',
  'resize an image to a thumbnail',
  'connect to a postgres database and run a query',
  'validate an email address with a regular expression',
  'merge two sorted linked lists',
  'count the vowels in a string',
  'download a file over https with a progress bar',
];

interface Match {
  pattern_key: string;
  reuse_tier: string;
  score: number;
  pattern: { task: string };
  explain?: { tier_rule: string; outcome?: { adjustment: number; exact: string | null; failures: { query: string }[] } };
  lessons?: { detail: string; query: string; similarity: number; at: string }[];
}
interface Recalled {
  recall_id: string;
  matches: Match[];
}

for (const storage of ['json', 'postgres'] as const) {
  describe.skipIf(storage === 'postgres' && !hasPg)(`outcome ranking on ${storage}`, () => {
    let h: Harness;
    const keyOf = new Map<string, string>();

    async function learn(task: string, project: string): Promise<void> {
      const res = await h.call('POST', '/v1/learn', learnBody(task), { 'x-project-id': project });
      expect(res.statusCode).toBe(200);
      keyOf.set(`${project}:${task}`, res.json().pattern_key);
    }
    async function recall(task: string, project: string, extra: Record<string, unknown> = {}): Promise<Recalled> {
      const res = await h.call('POST', '/v1/recall', { task, limit: 5, readonly: true, explain: true, ...extra }, { 'x-project-id': project });
      expect(res.statusCode).toBe(200);
      return res.json();
    }
    async function report(r: Recalled, key: string, passed: boolean, project: string, detail?: string): Promise<void> {
      const res = await h.call('POST', '/v1/outcomes', { recall_id: r.recall_id, pattern_key: key, passed, source: 'tests', ...(detail ? { detail } : {}) }, { 'x-project-id': project });
      expect(res.statusCode, res.body).toBe(200);
    }
    const tasks = (r: Recalled) => r.matches.map((m) => m.pattern.task);

    beforeAll(async () => {
      h = storage === 'json' ? await jsonHarness() : await pgHarness(database);
    });
    afterAll(async () => {
      await h?.close();
    });

    it('a failure on this exact wording moves the pattern below the alternatives, off duplicate, with its lesson', async () => {
      // PostgreSQL's keys are bound to one project: each case uses the harness's own there.
      const project = storage === 'json' ? 'exact' : 'default';
      const failing = 'reverse the words in a sentence';
      const alternative = 'reverse the words in a given sentence';
      for (const t of [...FILLERS, failing, alternative]) await learn(t, project);

      const before = await recall(failing, project);
      expect(before.matches[0].pattern.task).toBe(failing);
      expect(before.matches[0].reuse_tier).toBe('duplicate');
      // The alternative is a near-duplicate of the top match: dedup hides it.
      expect(tasks(before)).not.toContain(alternative);

      await report(before, before.matches[0].pattern_key, false, project, 'assert reverse_words("a b") == "b a" failed');

      const after = await recall(failing, project);
      // The adjustment runs before dedup: the alternative now comes first and the failing pattern is the one dropped.
      expect(after.matches[0].pattern.task).toBe(alternative);
      expect(tasks(after)).not.toContain(failing);

      const all = await recall(failing, project, { deduplicate: false, limit: 20 });
      const at = tasks(all).indexOf(failing);
      expect(at).toBeGreaterThan(tasks(all).indexOf(alternative));
      const demoted = all.matches[at];
      expect(demoted.reuse_tier).not.toBe('duplicate');
      expect(demoted.explain?.tier_rule).toBe('failed_on_this_wording');
      expect(demoted.explain?.outcome).toMatchObject({ exact: 'failed' });
      expect(demoted.explain!.outcome!.adjustment).toBeLessThan(0);
      expect(demoted.lessons).toEqual([{ detail: 'assert reverse_words("a b") == "b a" failed', query: failing, similarity: 1, at: expect.any(String) }]);
      // The alternative carries nothing it did not earn.
      expect(all.matches[tasks(all).indexOf(alternative)].lessons).toBeUndefined();
    });

    it('a failure for a lookalike problem\'s wording does not demote the pattern for its own problem\'s asks', async () => {
      const project = storage === 'json' ? 'lookalike' : 'default';
      const stored = 'convert a decimal number to octal';
      // The lookalike problem ("octal to decimal") is not stored: its asks get the pattern above, which fails them.
      const lookalikeAsk = 'convert an octal number into decimal';
      const ownAsk = 'write a function that changes a decimal number to octal';
      for (const t of [...FILLERS, stored]) await learn(t, project);

      const ownBefore = await recall(ownAsk, project);
      expect(ownBefore.matches[0].pattern.task).toBe(stored);
      const asked = await recall(lookalikeAsk, project);
      const key = asked.matches.find((m) => m.pattern.task === stored)!.pattern_key;
      await report(asked, key, false, project, 'assert octal_to_decimal(25) == 21 failed');

      const ownAfter = await recall(ownAsk, project);
      expect(ownAfter.matches[0].pattern.task).toBe(stored);
      expect(ownAfter.matches[0].reuse_tier).toBe(ownBefore.matches[0].reuse_tier);
      // Its own problem's wording never failed: no exact-wording move.
      expect(ownAfter.matches[0].explain?.outcome?.exact ?? null).toBeNull();
      // The lookalike's wording itself, asked again, no longer gets it as a duplicate.
      const again = await recall(lookalikeAsk, project);
      const m = again.matches.find((x) => x.pattern.task === stored);
      if (m) expect(m.reuse_tier).not.toBe('duplicate');
    });

    it('a success on one wording raises the pattern for that wording only', async () => {
      const project = storage === 'json' ? 'success' : 'default';
      const ascending = 'sort a list of numbers in ascending order';
      const descending = 'sort a list of numbers in descending order';
      for (const t of [...FILLERS, ascending, descending]) await learn(t, project);
      const elsewhere = 'order a list of numbers from the largest to the smallest';
      const w1 = 'arrange the numbers of a list from smallest to largest';

      const otherBefore = await recall(elsewhere, project, { deduplicate: false });
      const first = await recall(w1, project, { deduplicate: false });
      // The second match passed on this wording (the agent tried it).
      const runnerUp = first.matches[1];
      await report(first, runnerUp.pattern_key, true, project);

      // On this wording the success counts: the pattern that passed comes first.
      const again = await recall(w1, project, { deduplicate: false });
      expect(again.matches[0].pattern_key).toBe(runnerUp.pattern_key);
      expect(again.matches[0].explain?.outcome?.exact).toBe('passed');
      // Elsewhere nothing moved: the same order and the same scores.
      const otherAfter = await recall(elsewhere, project, { deduplicate: false });
      expect(otherAfter.matches.map((m) => [m.pattern_key, m.score, m.reuse_tier])).toEqual(otherBefore.matches.map((m) => [m.pattern_key, m.score, m.reuse_tier]));
    });
  });
}

describe('SERVICE_OUTCOME_RANKING=off', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await jsonHarness({ SERVICE_OUTCOME_RANKING: 'off' });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('keeps the outcome but leaves ranking, tiers and lessons as they were', async () => {
    const failing = 'reverse the words in a sentence';
    for (const t of [...FILLERS, failing, 'reverse the words in a given sentence']) {
      expect((await h.call('POST', '/v1/learn', learnBody(t))).statusCode).toBe(200);
    }
    const before = (await h.call('POST', '/v1/recall', { task: failing, readonly: true, explain: true })).json() as Recalled;
    const report = await h.call('POST', '/v1/outcomes', { recall_id: before.recall_id, pattern_key: before.matches[0].pattern_key, passed: false, detail: 'wrong' });
    expect(report.statusCode).toBe(200);
    const after = (await h.call('POST', '/v1/recall', { task: failing, readonly: true, explain: true })).json() as Recalled;
    expect(after.matches.map((m) => [m.pattern_key, m.score, m.reuse_tier])).toEqual(before.matches.map((m) => [m.pattern_key, m.score, m.reuse_tier]));
    expect(after.matches[0].lessons).toBeUndefined();
    expect(after.matches[0].explain?.outcome).toBeUndefined();
  });
});
