import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { learnBody, startServer, type TestServer } from './helpers.js';

/**
 * Recall quality on the offline model: orderings, not MiniLM thresholds. Each group's first
 * two paraphrases are learned; the third is held out and recalled.
 */
const GROUPS: { name: string; learned: [string, string]; heldOut: string }[] = [
  {
    name: 'csv average',
    learned: ['Parse a CSV file and compute the average of a numeric column', 'Read a CSV file and calculate the mean of one numeric column'],
    heldOut: 'Load comma separated values and average a number column',
  },
  {
    name: 'http retry',
    learned: ['Send an HTTP GET request and retry on network failure with exponential backoff', 'Fetch a URL with retries and exponential backoff when the network fails'],
    heldOut: 'Make a web request that retries with increasing delays after connection errors',
  },
  {
    name: 'thumbnails',
    learned: ['Resize all JPEG images in a folder to thumbnails', 'Create thumbnail versions of every JPEG picture in a directory'],
    heldOut: 'Shrink each jpg photo in a folder into a small thumbnail',
  },
  {
    name: 'postgres tables',
    learned: ['Connect to PostgreSQL and list all tables in the public schema', 'Query a Postgres database for the names of tables in the public schema'],
    heldOut: 'List the tables of the public schema in a PostgreSQL database',
  },
  {
    name: 'string reversal test',
    learned: ['Write a unit test for a function that reverses a string', 'Create a test case checking a string reversal function'],
    heldOut: 'Add unit tests for the function that reverses text',
  },
  {
    name: 'nightly backup',
    learned: ['Schedule a cron job that backs up the database every night', 'Set up a nightly cron task to back up the database'],
    heldOut: 'Create a scheduled nightly database backup with cron',
  },
];

const UNRELATED = ['Bake a chocolate cake for a birthday party', 'Translate a poem from French into English', 'Plan a hiking trip in the mountains'];

interface Match {
  pattern_key: string;
  similarity: number;
  score: number;
  pattern: { task: string };
}

describe('recall quality (offline model)', () => {
  let t: TestServer;
  const groupOf = new Map<string, string>();

  beforeAll(async () => {
    t = await startServer();
    for (const group of GROUPS) {
      for (const task of group.learned) {
        const res = (await t.call('POST', '/v1/learn', learnBody(task))).json();
        expect(res.stored).toBe(true);
        groupOf.set(res.pattern_key, group.name);
      }
    }
    for (const task of UNRELATED) {
      const res = (await t.call('POST', '/v1/learn', learnBody(task))).json();
      groupOf.set(res.pattern_key, 'unrelated');
    }
  });
  afterAll(async () => {
    await t.close();
  });

  const recallAll = async (task: string): Promise<Match[]> => {
    const res = await t.call('POST', '/v1/recall', { task, limit: 50, deduplicate: false, readonly: true });
    expect(res.statusCode).toBe(200);
    return res.json().matches;
  };

  for (const group of GROUPS) {
    it(`a held-out paraphrase recalls its own group first: ${group.name}`, async () => {
      const matches = await recallAll(group.heldOut);
      expect(matches).toHaveLength(GROUPS.length * 2 + UNRELATED.length);
      expect(groupOf.get(matches[0].pattern_key)).toBe(group.name);
      // Every paraphrase of the group outranks every unrelated task.
      const ranks = (name: string) => matches.flatMap((m, i) => (groupOf.get(m.pattern_key) === name ? [i] : []));
      expect(Math.max(...ranks(group.name))).toBeLessThan(Math.min(...ranks('unrelated')));
    });
  }

  it('unrelated queries match every learned pattern less than any held-out paraphrase matches its group', async () => {
    let weakestParaphrase = Infinity;
    for (const group of GROUPS) {
      const best = (await recallAll(group.heldOut))[0];
      weakestParaphrase = Math.min(weakestParaphrase, best.similarity);
    }
    for (const query of ['Knit a wool scarf for the winter', 'Write a love letter in the style of a sonnet', 'Repaint the living room walls in blue']) {
      const best = (await recallAll(query)).filter((m) => groupOf.get(m.pattern_key) !== 'unrelated')[0];
      expect(best.similarity).toBeLessThan(weakestParaphrase);
    }
  });
});
