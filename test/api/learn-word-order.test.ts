/**
 * Learn's near-identical rule sees word order: the same words in another order are another
 * task ("octal to decimal" is not "decimal to octal"), and stay two patterns, each with its
 * own task and code; the same task up to case, spacing, punctuation and one small edit still
 * lands on the stored pattern. Both storages (PostgreSQL when it is reachable), through the
 * bundled embedding model, which gives the reordered pairs a cosine above 0.9.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { NEAR_IDENTICAL_SIMILARITY } from '../../src/core/near-identical.js';
import { cosine } from '../../src/core/similarity.js';
import { requirePostgres } from '../support/pg.js';
import { jsonHarness, pgHarness, type Harness } from './both-storages.js';
import { perFileDatabase } from './db-auth-helpers.js';

const hasPg = await requirePostgres('learn word order on PostgreSQL');
const database = perFileDatabase('learnorder');
afterAll(async () => {
  await database.drop();
});
const HARNESSES: [string, () => Promise<Harness>][] = [['json', () => jsonHarness()]];
if (hasPg) HARNESSES.push(['postgres', () => pgHarness(database)]);

/** Same words, other order, other job: each pair must stay two patterns. */
const REORDERED: [string, string][] = [
  ['Write a python function to convert octal number to decimal number.', 'Write a python function to convert decimal number to octal number.'],
  ['Convert Markdown text to HTML', 'Convert HTML to Markdown text'],
  ['Copy every file from the backup folder into the release folder', 'Copy every file from the release folder into the backup folder'],
  // Reversed word for word.
  ['sort the list then remove the duplicates', 'duplicates the remove then list the sort'],
];

const LONG_TASK =
  'Send an HTTP GET request to the billing API, retry three times on a network failure with exponential backoff, ' +
  'and write every failed attempt to the audit log of the nightly job';

/** The same task: case, spacing, punctuation, one word added, one word changed. */
const SAME_TASK: [string, string][] = [
  ['Write a python function to convert octal number to decimal number.', 'WRITE a Python function   to convert octal-number to decimal number!'],
  [LONG_TASK, LONG_TASK.replace('three times', 'three more times')],
  [LONG_TASK, LONG_TASK.replace('three times', 'five times')],
];

describe.each(HARNESSES)('learn: near-identical means the same words in the same order (%s)', (_name, start) => {
  let t: Harness | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  async function learn(task: string, code: string, eval_score: number) {
    const res = await t!.call('POST', '/v1/learn', { task, code, eval_score });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { stored: boolean; pattern_count: number; pattern_key: string };
  }

  /** The stored pattern's task and code. */
  async function stored(key: string): Promise<{ task: string; code: string }> {
    const res = await t!.call('GET', `/v1/patterns/${encodeURIComponent(key)}`);
    expect(res.statusCode, res.body).toBe(200);
    const { task, code } = res.json();
    return { task, code };
  }

  it.each(REORDERED)('keeps "%s" and "%s" as two patterns, each with its own code', async (first, second) => {
    t = await start();
    // The model alone would merge them: it reads a bag of words.
    const [a, b] = await t.app.deps.embedder.embed([first, second]);
    expect(cosine(a, b)).toBeGreaterThanOrEqual(NEAR_IDENTICAL_SIMILARITY);
    const one = await learn(first, 'solve_first()', 7);
    const two = await learn(second, 'solve_second()', 9);
    expect(two).toMatchObject({ stored: true, pattern_count: 2 });
    expect(two.pattern_key).not.toBe(one.pattern_key);
    // Each task keeps its own code: the first was not rewritten with the second's.
    expect(await stored(one.pattern_key)).toEqual({ task: first, code: 'solve_first()' });
    expect(await stored(two.pattern_key)).toEqual({ task: second, code: 'solve_second()' });
  });

  it.each(SAME_TASK)('lands "%s" and "%s" on one pattern', async (first, second) => {
    t = await start();
    const one = await learn(first, 'v1()', 6);
    const two = await learn(second, 'v2()', 9);
    expect(two).toMatchObject({ stored: true, pattern_count: 1, pattern_key: one.pattern_key });
    // The better run's code replaced the stored one's, under the first wording.
    expect(await stored(one.pattern_key)).toEqual({ task: first, code: 'v2()' });
  });
});
