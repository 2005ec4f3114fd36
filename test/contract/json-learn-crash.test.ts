/**
 * JSON storage: a learn survives a crash whole or not at all. Its writes are one journal line,
 * so whatever prefix of the journal a crash leaves, a reopened store never shows a pattern
 * without its eval observation, nor a counted run or ROI event of a learn that is not there.
 */
import { mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJsonStorage, type JsonStorage } from '../../src/adapters/storage/json/index.js';
import type { Scope } from '../../src/core/types.js';
import type { LearnRecord } from '../../src/ports/storage.js';
import { runChild, transpileAdapter } from './json-storage.helpers.js';
import { at, makePattern, pid, SCOPE_A, vec } from './storage.contract.js';

const journalOf = (dir: string, s: Scope) => path.join(dir, 'tenants', s.tenant_id, 'projects', s.project_id, 'journal.ndjson');

/** What a learn touches, for one pattern id. */
async function learnView(storage: JsonStorage, id: string) {
  return {
    pattern: await storage.patterns.get(SCOPE_A, id),
    evals: (await storage.evals.recent(SCOPE_A, [id], 10)).get(id) ?? [],
    runs: (await storage.metrics.get(SCOPE_A)).runs,
    events: (await storage.analytics.list(SCOPE_A, { limit: 100 })).length,
  };
}

describe('JSON storage: a learn and a crash', () => {
  let dir: string;
  const open: JsonStorage[] = [];
  const make = async () => {
    const s = await createJsonStorage({ dataPath: dir });
    open.push(s);
    return s;
  };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'json-learn-crash-'));
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a journal cut inside the learn\'s bytes reopens with none of it; whole, with all of it', async () => {
    const first = await make();
    await first.patterns.insert(SCOPE_A, makePattern(1), vec(1));
    const journal = journalOf(dir, SCOPE_A);
    const start = (await stat(journal)).size;
    const record: LearnRecord = {
      pattern: { op: 'insert', pattern: makePattern(2), vector: vec(0, 1) },
      eval_score: 8,
      at: at(20),
      event: { at: at(20), kind: 'learn', stored: true, eval_score: 8, latency_ms: 3 },
    };
    await first.recordLearn(SCOPE_A, record);
    await first.close();
    const full = await readFile(journal);
    const end = full.length;
    const none = { pattern: null, evals: [], runs: 0, events: 0 };
    const all = { pattern: makePattern(2), evals: [8], runs: 1, events: 1 };

    // Cuts 8 bytes apart through the learn's bytes (closer than any journal line is long, so
    // a learn written as several lines would be caught between two), and the two last bytes.
    // A line without its newline was never acknowledged (the newline is synced with it).
    const cuts = new Set([...Array.from({ length: Math.ceil((end - start) / 8) }, (_, i) => start + i * 8), end - 1, end]);
    for (const cut of cuts) {
      await writeFile(journal, full);
      await truncate(journal, cut);
      const reopened = await make();
      const seen = await learnView(reopened, pid(2));
      expect(seen, `journal cut at byte ${cut} of ${end}`).toEqual(cut === end ? all : none);
      expect(await reopened.patterns.get(SCOPE_A, pid(1))).toEqual(makePattern(1));
      await reopened.close();
      open.pop();
    }
  });

  it('a writer killed with SIGKILL mid-learns leaves every pattern with its observation, counted once', async () => {
    const adapter = await transpileAdapter(path.join(dir, 'build'));
    const data = path.join(dir, 'data');
    const child = await runChild(dir, 'learner.mjs', `
      import { createJsonStorage } from ${JSON.stringify(adapter)};
      const s = await createJsonStorage({ dataPath: ${JSON.stringify(data)}, compactAfterBytes: 20000 });
      const scope = { tenant_id: 'tenant-a', project_id: 'default' };
      const v = (i) => { const a = new Float32Array(8); a[i % 8] = 1; a[(i + 3) % 8] = 0.5; return a; };
      const p = (i) => ({ id: 'p' + String(i).padStart(8, '0'), task: 'task ' + i, code: 'x'.repeat(500), output: null,
        eval_score: 6, success_score: 6, reuse_count: 0, run_id: null, classification: 'internal', source: 'api',
        author: null, expires_at: null, redacted: false, created_at: 't', updated_at: 't', last_aged_at: null });
      const learn = (i) => s.recordLearn(scope, {
        pattern: { op: 'insert', pattern: p(i), vector: v(i) }, eval_score: 6, at: new Date(i * 1000).toISOString(),
        event: { at: new Date(i * 1000).toISOString(), kind: 'learn', stored: true, eval_score: 6, latency_ms: 1 },
      });
      for (let i = 0; ; i += 4) {
        // Four at once: their lines share the journal's group commit.
        await Promise.all([learn(i), learn(i + 1), learn(i + 2), learn(i + 3)]);
        console.log('ack ' + (i + 3));
      }
    `);
    await child.waitFor(/^ack 99$/);
    child.proc.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');
    const acked = Math.max(...child.lines.filter((l) => l.startsWith('ack ')).map((l) => Number(l.slice(4))));

    const after = await createJsonStorage({ dataPath: data });
    open.push(after);
    const ids: string[] = [];
    for await (const p of after.patterns.iterate(SCOPE_A)) ids.push(p.id);
    expect(ids.length).toBeGreaterThan(acked);
    const evals = await after.evals.recent(SCOPE_A, ids, 10);
    for (const id of ids) expect(evals.get(id), `observations of ${id}`).toEqual([6]);
    expect(await after.metrics.get(SCOPE_A)).toMatchObject({ runs: ids.length, successes: ids.length, eval_sum: 6 * ids.length });
    expect(await after.analytics.list(SCOPE_A, { limit: 100_000 })).toHaveLength(ids.length);
  });
});
