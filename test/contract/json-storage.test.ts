import { spawn } from 'node:child_process';
import { appendFile, copyFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJsonStorage, type JsonStorage } from '../../src/adapters/storage/json/index.js';
import { ValidationError } from '../../src/core/errors.js';
import { patternKey, type Scope } from '../../src/core/types.js';
import { recallTrace } from '../../src/core/recall-trace.js';
import { noopInstruments } from '../../src/ports/observability.js';
import { dumpStorage, runChild, transpileAdapter } from './json-storage.helpers.js';
import { angled, at, makePattern, pid, runStorageContract, SCOPE_A, SCOPE_B, SCOPE_C, vec } from './storage.contract.js';

runStorageContract('json', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'json-storage-contract-'));
  const storage = await createJsonStorage({ dataPath: dir });
  return {
    storage,
    cleanup: async () => {
      await storage.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

const SCOPES = [SCOPE_A, SCOPE_B, SCOPE_C];
const QUERIES = [vec(1), angled(45), vec(0, 0, 1)];
const journalOf = (dir: string, s: Scope) => path.join(dir, 'tenants', s.tenant_id, 'projects', s.project_id, 'journal.ndjson');
const snapshotOf = (dir: string, s: Scope) => path.join(dir, 'tenants', s.tenant_id, 'projects', s.project_id, 'snapshot.ndjson');

/** Exercises every kind of mutation, in two scopes. */
async function populate(storage: JsonStorage, from = 0, to = 30): Promise<void> {
  for (const scope of [SCOPE_A, SCOPE_C]) {
    for (let n = from; n < to; n++) {
      await storage.patterns.insert(scope, makePattern(n, { success_score: n % 10, classification: n % 2 ? 'public' : 'internal' }), angled(n * 3));
      await storage.evals.add(scope, pid(n), n % 10, at(n));
    }
    await storage.patterns.update(scope, makePattern(from + 1, { code: 'updated()' }), vec(0, 0, 1));
    await storage.patterns.delete(scope, pid(from + 2));
    await storage.patterns.recordReuse(scope, [pid(from + 3), pid(from + 4)], 0.1, at(999));
    await storage.patterns.setVector(scope, pid(from + 5), angled(45));
    await storage.skills.set(scope, pid(from + 3), ['python', 'csv']);
    await storage.feedback.upsert(scope, [{ id: `f${from}`, text: 'add tests', count: 2, score: 0.6, last_seen: at(5), last_decayed_at: null, tasks: ['x'] }]);
    await storage.metrics.recordRun(scope, 7);
    await storage.metrics.recordRecall(scope, true);
    await storage.analytics.append(scope, { at: at(from), kind: 'learn', stored: true, eval_score: 7 });
  }
  await storage.audit.append({ at: at(from), kind: 'PII_REDACTED', tenant_id: 'tenant-a', project_id: 'default', actor: 'env', request_id: null, ip: null, detail: { email: 1 } });
  await storage.meta.setEmbeddingInfo({ provider: 'local', model: 'm', dimension: 8 });
}

describe('JSON storage: files, durability, locking', () => {
  let dir: string;
  const open: JsonStorage[] = [];
  const make = async (opts: Partial<Parameters<typeof createJsonStorage>[0]> = {}) => {
    const s = await createJsonStorage({ dataPath: dir, ...opts });
    open.push(s);
    return s;
  };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'json-storage-'));
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps one folder per scope, vectors as base64, and everything after close and reopen', async () => {
    const first = await make();
    await populate(first);
    const before = await dumpStorage(first, SCOPES, QUERIES);
    await first.close();
    const journal = await readFile(journalOf(dir, SCOPE_A), 'utf8');
    const put = JSON.parse(journal.split('\n')[0]);
    expect(put).toMatchObject({ op: 'put', seq: 1 });
    expect(Buffer.from(put.v, 'base64')).toHaveLength(8 * 4);
    expect(journal).not.toMatch(/\[-?0\.\d+,/); // no JSON number arrays
    const second = await make();
    expect(await dumpStorage(second, SCOPES, QUERIES)).toEqual(before);
    expect((before['tenant-a/default'] as { count: number }).count).toBe(29);
  });

  it('keeps every acknowledged write when reopened without close (crash in-process)', async () => {
    const first = await make();
    await populate(first);
    const before = await dumpStorage(first, SCOPES, QUERIES);
    await rm(path.join(dir, 'service.lock')); // the owner "died": its lock is gone, its files stay as they are
    const second = await make();
    expect(await dumpStorage(second, SCOPES, QUERIES)).toEqual(before);
    await first.close(); // must not remove the new owner's lock
    await expect(second.ping()).resolves.toBeUndefined();
    await expect(createJsonStorage({ dataPath: dir })).rejects.toThrow(`in use by pid ${process.pid}`);
  });

  it('keeps every acknowledged write of a writer killed with SIGKILL, and takes over its lock', async () => {
    const adapter = await transpileAdapter(path.join(dir, 'build'));
    const data = path.join(dir, 'data');
    const child = await runChild(dir, 'writer.mjs', `
      import { createJsonStorage } from ${JSON.stringify(adapter)};
      const s = await createJsonStorage({ dataPath: ${JSON.stringify(data)}, compactAfterBytes: 20000 });
      const scope = { tenant_id: 'tenant-a', project_id: 'default' };
      const v = (i) => { const a = new Float32Array(8); a[i % 8] = 1; a[(i + 1) % 8] = 0.5; return a; };
      const p = (i) => ({ id: 'p' + String(i).padStart(8, '0'), task: 'task ' + i, code: 'x'.repeat(500), output: null,
        eval_score: 5, success_score: 5, reuse_count: 0, run_id: null, classification: 'internal', source: 'api',
        author: null, expires_at: null, redacted: false, created_at: 't', updated_at: 't', last_aged_at: null });
      console.log('ready');
      for (let i = 0; ; i++) {
        await Promise.all([s.patterns.insert(scope, p(i), v(i)), s.metrics.recordRun(scope, 7)]);
        console.log('ack ' + i);
      }
    `);
    await child.waitFor(/^ack 60$/);
    child.proc.kill('SIGKILL');
    const { signal } = await child.exited;
    expect(signal).toBe('SIGKILL');
    const acked = Math.max(...child.lines.filter((l) => l.startsWith('ack ')).map((l) => Number(l.slice(4))));
    const lock = await readFile(path.join(data, 'service.lock'), 'utf8');
    expect(lock).toMatch(new RegExp(`^${child.proc.pid} `)); // the dead writer's lock is still there

    const after = await createJsonStorage({ dataPath: data });
    open.push(after);
    for (let i = 0; i <= acked; i++) {
      expect((await after.patterns.get(SCOPE_A, pid(i)))?.task, `pattern ${i}`).toBe(`task ${i}`);
    }
    const count = await after.patterns.count(SCOPE_A);
    expect(count).toBeGreaterThanOrEqual(acked + 1);
    expect((await after.metrics.get(SCOPE_A)).runs).toBeGreaterThanOrEqual(acked + 1);
    const [hit] = await after.patterns.search(SCOPE_A, vec(0, 0, 0, 1, 0.5), 1);
    expect(hit.similarity).toBeCloseTo(1, 5);
  });

  it('refuses a second process, and a second instance in this process, while the path is open', async () => {
    const first = await make();
    await expect(createJsonStorage({ dataPath: dir })).rejects.toThrow(`data path ${dir} is in use by pid ${process.pid}`);
    const adapter = await transpileAdapter(path.join(os.tmpdir(), path.basename(dir) + '-build'));
    try {
      const child = await runChild(path.dirname(adapter), 'second.mjs', `
        import { createJsonStorage } from ${JSON.stringify(adapter)};
        try { await createJsonStorage({ dataPath: ${JSON.stringify(dir)} }); console.log('opened'); }
        catch (err) { console.log('refused: ' + err.message); }
      `);
      const line = await child.waitFor(/^(opened|refused)/);
      expect(line).toContain(`refused: data path ${dir} is in use by pid ${process.pid}`);
    } finally {
      await rm(path.join(os.tmpdir(), path.basename(dir) + '-build'), { recursive: true, force: true });
    }
    await first.close();
    const again = await make();
    await expect(again.ping()).resolves.toBeUndefined();
  });

  it('takes over a stale lock left by a dead process', async () => {
    const dead = spawn(process.execPath, ['-e', '']);
    const deadPid = dead.pid!;
    await new Promise((resolve) => dead.on('exit', resolve));
    await writeFile(path.join(dir, 'service.lock'), `${deadPid} oldtoken\n`);
    const s = await make();
    expect(await readFile(path.join(dir, 'service.lock'), 'utf8')).toMatch(new RegExp(`^${process.pid} `));
    await s.close();
    await expect(stat(path.join(dir, 'service.lock'))).rejects.toThrow();
  });

  it('ignores a torn last journal line, and trims it so later writes stay readable', async () => {
    const first = await make();
    await populate(first);
    const before = await dumpStorage(first, SCOPES, QUERIES);
    await first.close();
    await appendFile(journalOf(dir, SCOPE_A), '{"op":"put","p":{"id":"p0000');
    const second = await make();
    expect(await dumpStorage(second, SCOPES, QUERIES)).toEqual(before);
    await second.patterns.insert(SCOPE_A, makePattern(500), vec(1));
    await second.close();
    const third = await make();
    expect((await third.patterns.get(SCOPE_A, pid(500)))?.id).toBe(pid(500));
    expect(await third.patterns.count(SCOPE_A)).toBe(30);
  });

  it('refuses to open a journal damaged in the middle, naming file and line', async () => {
    const first = await make();
    await populate(first);
    await first.close();
    const file = journalOf(dir, SCOPE_A);
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[3] = '{"op":"put", garbage';
    await writeFile(file, lines.join('\n'));
    await expect(createJsonStorage({ dataPath: dir })).rejects.toThrow(`${file} at line 4`);
    await expect(stat(path.join(dir, 'service.lock'))).rejects.toThrow(); // released after the failure
  });

  it('compaction writes a snapshot, empties the journal and preserves everything', async () => {
    const first = await make({ compactAfterBytes: 4096 });
    await populate(first, 0, 30);
    await populate(first, 100, 140);
    const before = await dumpStorage(first, SCOPES, QUERIES);
    await first.close();
    expect((await stat(snapshotOf(dir, SCOPE_A))).size).toBeGreaterThan(4096);
    expect((await stat(journalOf(dir, SCOPE_A))).size).toBeLessThan((await stat(snapshotOf(dir, SCOPE_A))).size);
    const second = await make();
    expect(await dumpStorage(second, SCOPES, QUERIES)).toEqual(before);
    await second.compact();
    expect((await stat(journalOf(dir, SCOPE_A))).size).toBe(0);
    await second.close();
    const third = await make();
    expect(await dumpStorage(third, SCOPES, QUERIES)).toEqual(before);
  });

  it('keeps recall traces and outcomes through journal replay and a snapshot', async () => {
    const first = await make();
    await first.patterns.insert(SCOPE_A, makePattern(1), vec(1));
    const trace = recallTrace('r1', at(10), 'Sort it', vec(1, 0.5), [patternKey(pid(1))]);
    await first.recordRecall(SCOPE_A, { page_ids: [pid(1)], reused_ids: [pid(1)], bonus: 0.1, at: at(10), reused: true, event: { at: at(10), kind: 'recall' }, trace });
    await first.outcomes.report(SCOPE_A, { recall_id: 'r1', pattern_key: patternKey(pid(1)), passed: false, score: null, detail: 'why', source: null, at: at(11) }, { credit: -0.1 });
    const view = async (st: JsonStorage) => ({
      trace: await st.outcomes.getTrace(SCOPE_A, 'r1'),
      outcomes: await st.outcomes.listForPattern(SCOPE_A, pid(1), { limit: 5 }),
      pattern: await st.patterns.get(SCOPE_A, pid(1)),
    });
    const before = await view(first);
    expect(before.outcomes).toHaveLength(1);
    await first.close();
    const second = await make();
    expect(await view(second)).toEqual(before);
    await second.compact();
    await second.close();
    const third = await make();
    expect(await view(third)).toEqual(before);
  });

  it('writes racing with compactions are neither lost nor applied twice', async () => {
    const s = await make({ compactAfterBytes: 1 }); // compact after every write
    for (let n = 0; n < 4; n++) await s.patterns.insert(SCOPE_A, makePattern(n, { success_score: 1 }), angled(n * 10));
    const writer = async (w: number) => {
      for (let i = 0; i < 30; i++) {
        if (i % 3 === 0) await s.metrics.recordRun(SCOPE_A, 6);
        else await s.patterns.recordReuse(SCOPE_A, [pid((w + i) % 4)], 0.01, at(i));
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
    const check = async (st: JsonStorage) => {
      expect((await st.metrics.get(SCOPE_A)).runs).toBe(80);
      let reuses = 0;
      for (let n = 0; n < 4; n++) reuses += (await st.patterns.get(SCOPE_A, pid(n)))!.reuse_count;
      expect(reuses).toBe(160);
    };
    await check(s);
    await s.close();
    await check(await make());
  });

  it('does not apply journal lines twice after a crash between snapshot and journal truncation', async () => {
    const first = await make();
    await populate(first);
    await first.patterns.recordReuse(SCOPE_A, [pid(7)], 0.5, at(1000));
    const before = await dumpStorage(first, SCOPES, QUERIES);
    const saved = path.join(dir, 'journal.saved');
    await copyFile(journalOf(dir, SCOPE_A), saved);
    await first.compact();
    await first.close();
    await copyFile(saved, journalOf(dir, SCOPE_A)); // as if the truncate never happened
    const second = await make();
    expect(await dumpStorage(second, SCOPES, QUERIES)).toEqual(before);
    expect((await second.patterns.get(SCOPE_A, pid(7)))!.reuse_count).toBe(1);
  });

  it('rejects bad tenant, project and pattern ids before touching the disk', async () => {
    const s = await make();
    const bad: Scope[] = [
      { tenant_id: '..', project_id: 'default' },
      { tenant_id: '../../etc', project_id: 'default' },
      { tenant_id: 'a/b', project_id: 'default' },
      { tenant_id: 'tenant-a', project_id: '..' },
      { tenant_id: 'tenant-a', project_id: 'x\\y' },
      { tenant_id: 'tenant-a', project_id: '' },
      { tenant_id: 'tenant-a', project_id: 'a.b' },
      { tenant_id: 't'.repeat(65), project_id: 'default' },
    ];
    for (const scope of bad) {
      await expect(s.patterns.insert(scope, makePattern(1), vec(1))).rejects.toBeInstanceOf(ValidationError);
      await expect(s.metrics.recordRun(scope, 5)).rejects.toBeInstanceOf(ValidationError);
      await expect(s.patterns.count(scope)).rejects.toBeInstanceOf(ValidationError);
      await expect(s.analytics.list(scope, { limit: 5 })).rejects.toBeInstanceOf(ValidationError);
    }
    for (const id of ['../x', 'a.b', 'a/b', 'a b', '', 'a'.repeat(65)]) {
      await expect(s.patterns.insert(SCOPE_A, makePattern(1, { id }), vec(1))).rejects.toBeInstanceOf(ValidationError);
      expect(await s.patterns.get(SCOPE_A, id)).toBeNull();
    }
    // Reads of valid but unknown scopes do not create anything either.
    await s.patterns.search(SCOPE_B, vec(1), 5);
    expect((await readdir(dir)).sort()).toEqual(['service.lock']);
  });

  it('refuses calls after close; close is idempotent and releases the lock', async () => {
    const s = await make();
    await s.close();
    await s.close();
    await expect(s.patterns.count(SCOPE_A)).rejects.toThrow('closed');
    await expect(s.ping()).rejects.toThrow('closed');
    await expect(stat(path.join(dir, 'service.lock'))).rejects.toThrow();
  });

  it('reports storage operation timings to the instruments', async () => {
    const ops: [string, string, number][] = [];
    const s = await make({ instruments: { ...noopInstruments, storageOp: (b, o, sec) => ops.push([b, o, sec]) } });
    await s.patterns.insert(SCOPE_A, makePattern(1), vec(1));
    await s.patterns.search(SCOPE_A, vec(1), 3);
    expect(ops.map(([b, o]) => `${b}:${o}`)).toEqual(['json:load', 'json:patterns.insert', 'json:patterns.search']);
    for (const [, , sec] of ops) expect(sec).toBeGreaterThanOrEqual(0);
  });

  it('the SIMD and JS kernels agree, including dimensions that need padding', async () => {
    const wasm = await make();
    const js = await createJsonStorage({ dataPath: path.join(dir, 'js'), preferJsKernel: true });
    open.push(js);
    let seed = 42;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    const v37 = () => Float32Array.from({ length: 37 }, rand);
    for (let n = 0; n < 600; n++) {
      const v = v37();
      await Promise.all([wasm.patterns.insert(SCOPE_A, makePattern(n), v), js.patterns.insert(SCOPE_A, makePattern(n), v)]);
    }
    for (let q = 0; q < 5; q++) {
      const query = v37();
      const a = await wasm.patterns.search(SCOPE_A, query, 10);
      const b = await js.patterns.search(SCOPE_A, query, 10);
      expect(a.map((h) => h.pattern.id)).toEqual(b.map((h) => h.pattern.id));
      a.forEach((h, i) => expect(h.similarity).toBeCloseTo(b[i].similarity, 5));
      expect(a[0].similarity).toBeGreaterThan(a[9].similarity);
    }
  });

  it('refuses a vector of another dimension on insert, but lets setVector move a scope to a new model', async () => {
    const s = await make();
    await s.patterns.insert(SCOPE_A, makePattern(1), vec(1));
    await s.patterns.insert(SCOPE_A, makePattern(2), vec(0, 1));
    await expect(s.patterns.insert(SCOPE_A, makePattern(3), new Float32Array([1, 0, 0]))).rejects.toThrow('service reindex');
    await expect(s.patterns.search(SCOPE_A, new Float32Array([1, 0, 0]), 1)).rejects.toThrow('service reindex');
    await s.patterns.setVector(SCOPE_A, pid(1), new Float32Array([1, 0, 0]));
    expect((await s.patterns.search(SCOPE_A, new Float32Array([0, 1, 0]), 5)).map((h) => h.pattern.id)).toEqual([pid(1)]);
    await s.patterns.setVector(SCOPE_A, pid(2), new Float32Array([0, 1, 0]));
    await s.close();
    const reopened = await make();
    const hits = await reopened.patterns.search(SCOPE_A, new Float32Array([0, 1, 0]), 5);
    expect(hits.map((h) => h.pattern.id)).toEqual([pid(2), pid(1)]);
    expect(await reopened.patterns.count(SCOPE_A)).toBe(2);
  });
});
