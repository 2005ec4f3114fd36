import { describe, expect, it } from 'vitest';
import { StaticEmbedder } from '../../src/adapters/embeddings/static.js';
import type { Embedder } from '../../src/ports/embedder.js';
import { MODEL_PATH, ManualClock, learnBody, serversClosedAfterEach } from './helpers.js';

const start = serversClosedAfterEach();

const WEEK = 7 * 24 * 3600 * 1000;

describe('export / import', () => {
  it('round-trips every field into another store, skips existing keys unless overwrite', async () => {
    const source = await start();
    await source.call('POST', '/v1/learn', learnBody('Generate a sitemap for the marketing site', { run_id: 'run-1', author: 'agent-7', classification: 'public' }));
    await source.call('POST', '/v1/learn', learnBody('Migrate user avatars to object storage', { eval_score: 6.5, source: 'sdk' }));
    const exported = (await source.call('GET', '/v1/export')).json();
    expect(exported.count).toBe(2);
    expect(exported.records[0]).toMatchObject({ task: 'Generate a sitemap for the marketing site', run_id: 'run-1', author: 'agent-7', classification: 'public' });
    expect(exported.records[0]).not.toHaveProperty('vector');
    expect(exported.records[1]).toMatchObject({ source: 'sdk', eval_score: 6.5 });
    expect(await source.app.deps.storage.audit.list({ kind: 'DATA_EXPORTED', limit: 5 })).toHaveLength(1);

    const target = await start();
    const imported = await target.call('POST', '/v1/import', { records: exported.records });
    expect(imported.statusCode).toBe(200);
    expect(imported.json()).toEqual({ imported: 2, skipped: 0, total: 2 });
    expect((await target.call('GET', '/v1/export')).json().records).toEqual(exported.records);

    // Imported tasks are embedded: recall finds them.
    const match = (await target.call('POST', '/v1/recall', { task: 'Generate a sitemap for the marketing site', readonly: true })).json().matches[0];
    expect(match).toMatchObject({ pattern_key: exported.records[0].key, reuse_tier: 'duplicate' });

    const changed = exported.records.map((r: Record<string, unknown>) => ({ ...r, code: 'new code' }));
    expect((await target.call('POST', '/v1/import', { records: changed })).json()).toEqual({ imported: 0, skipped: 2, total: 2 });
    expect((await target.call('GET', '/v1/export')).json().records[0].code).not.toBe('new code');
    expect((await target.call('POST', '/v1/import', { records: changed, overwrite: true })).json()).toEqual({ imported: 2, skipped: 0, total: 2 });
    expect((await target.call('GET', '/v1/export')).json().records.map((r: { code: string }) => r.code)).toEqual(['new code', 'new code']);
  });

  it('a key given twice in one import: skipped the second time, or with overwrite the later record wins', async () => {
    const t = await start();
    const key = 'patterns/0000000000001abc';
    const first = { key, task: 'Compress nightly log archives', code: 'first', eval_score: 6 };
    const second = { ...first, code: 'second', eval_score: 9 };
    const others = Array.from({ length: 20 }, (_, i) => ({ task: `Unrelated imported task ${i}`, code: `c${i}`, eval_score: 5 }));

    const plain = await t.call('POST', '/v1/import', { records: [first, ...others, second] });
    expect(plain.json()).toEqual({ imported: 21, skipped: 1, total: 22 });
    const kept = (await t.call('GET', '/v1/export')).json().records.find((r: { key: string }) => r.key === key);
    expect(kept).toMatchObject({ code: 'first', eval_score: 6 });

    const fresh = await start();
    const replaced = await fresh.call('POST', '/v1/import', { records: [first, ...others, second], overwrite: true });
    expect(replaced.json()).toEqual({ imported: 22, skipped: 0, total: 22 });
    const records = (await fresh.call('GET', '/v1/export')).json().records;
    expect(records).toHaveLength(21);
    expect(records.find((r: { key: string }) => r.key === key)).toMatchObject({ code: 'second', eval_score: 9 });
  });

  it('embeds records without keys in batches and redacts them', async () => {
    let calls = 0;
    const inner = new StaticEmbedder({ folder: MODEL_PATH, modelId: 'use-lite-static' });
    const counting: Embedder = {
      get info() { return inner.info; },
      embed: (texts) => { calls++; return inner.embed(texts); },
    };
    const t = await start({}, { embedder: counting });
    const before = calls;
    const records = Array.from({ length: 130 }, (_, i) => ({ task: `Imported task number ${i} about widgets`, code: `code ${i}`, eval_score: 5 }));
    records[7] = { ...records[7], code: 'token=abcdef0123456789abcdef0123456789 and mail me@corp.example' };
    const res = await t.call('POST', '/v1/import', { records });
    expect(res.json()).toEqual({ imported: 130, skipped: 0, total: 130 });
    // 130 records → 3 batches of at most 64.
    expect(calls - before).toBe(3);
    const all = (await t.call('GET', '/v1/export')).json().records;
    expect(all).toHaveLength(130);
    expect(all.every((r: { source: string }) => r.source === 'import')).toBe(true);
    const secret = all.find((r: { task: string }) => r.task === 'Imported task number 7 about widgets');
    expect(secret.redacted).toBe(true);
    expect(secret.code).not.toMatch(/abcdef0123|me@corp/);
    const audit = await t.app.deps.storage.audit.list({ kind: 'PII_REDACTED', limit: 5 });
    expect(audit[0].detail).toMatchObject({ operation: 'import' });
  });
});

describe('aging', () => {
  it('decays by 0.98 per week, is idempotent, and prunes below 0.1', async () => {
    const clock = new ManualClock(new Date('2025-01-01T00:00:00Z'));
    const t = await start({}, { clock });
    await t.call('POST', '/v1/learn', learnBody('Render the quarterly sales dashboard', { eval_score: 8 }));
    await t.call('POST', '/v1/learn', learnBody('Ping the staging server health endpoint', { eval_score: 0.105 }));

    clock.advance(10 * WEEK);
    const first = await t.call('POST', '/v1/aging');
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ aged: 1, pruned: 1, remaining: 1, dry_run: false });
    const scoreAfter = async () => (await t.call('GET', '/v1/export')).json().records[0].success_score as number;
    expect(await scoreAfter()).toBeCloseTo(8 * 0.98 ** 10, 9);

    // Same instant again: nothing changes.
    expect((await t.call('POST', '/v1/aging')).json()).toEqual({ aged: 0, pruned: 0, remaining: 1, dry_run: false });
    expect(await scoreAfter()).toBeCloseTo(8 * 0.98 ** 10, 9);

    // Weekly runs compound to 0.98^(weeks since creation).
    for (let w = 0; w < 5; w++) {
      clock.advance(WEEK);
      await t.call('POST', '/v1/aging');
    }
    expect(await scoreAfter()).toBeCloseTo(8 * 0.98 ** 15, 9);
  });
});

describe('keyword fallback', () => {
  it('ranks by token overlap with X-Recall-Mode: keyword when the embedder fails', async () => {
    let failing = false;
    const inner = new StaticEmbedder({ folder: MODEL_PATH, modelId: 'use-lite-static' });
    const flaky: Embedder = {
      get info() { return inner.info; },
      embed: (texts) => (failing ? Promise.reject(new Error('ECONNRESET')) : inner.embed(texts)),
    };
    const t = await start({}, { embedder: flaky });
    await t.call('POST', '/v1/learn', learnBody('Rotate database credentials every ninety days'));
    await t.call('POST', '/v1/learn', learnBody('Draw a bar chart of monthly revenue'));
    failing = true;

    const res = await t.call('POST', '/v1/recall', { task: 'rotate the database credentials' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-recall-mode']).toBe('keyword');
    const { matches } = res.json();
    expect(matches).toHaveLength(1);
    expect(matches[0].pattern.task).toBe('Rotate database credentials every ninety days');

    // Learn cannot store a pattern without its vector: the outage is a 503, not a 500.
    const learn = await t.call('POST', '/v1/learn', learnBody('Something new'));
    expect(learn.statusCode).toBe(503);
    expect(learn.json().detail).toMatch(/embedding model is unavailable/);
  });
});
