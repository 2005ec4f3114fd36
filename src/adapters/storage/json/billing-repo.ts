import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BillingAccount } from '../../../core/billing.js';
import type { BillingRepository, UsageMonth } from '../../../ports/billing.js';
import type { PatternRepository } from '../../../ports/storage.js';
import { atomicWriteFile } from './durable/fs-durable.js';

export const BILLING_FILE = 'billing.json';

interface BillingFile {
  accounts: Record<string, BillingAccount>;
  /** tenant → month (`YYYY-MM-01`) → counters. */
  usage: Record<string, Record<string, { eval_runs: number; billed_blocks: number }>>;
  /** Processed payment event ids → event type. */
  events: Record<string, string>;
}

/**
 * Billing state of the JSON storage: one file, rewritten atomically (temp + fsync + rename)
 * before each write is acknowledged. The data path is locked to one process, so one in-process
 * queue serialises every read-modify-write: counters are exact, no increment is lost.
 */
export function createJsonBillingRepository(dataPath: string, patterns: PatternRepository): BillingRepository {
  const file = path.join(dataPath, BILLING_FILE);
  let state: BillingFile | null = null;
  let queue: Promise<unknown> = Promise.resolve();

  async function load(): Promise<BillingFile> {
    if (state) return state;
    try {
      state = JSON.parse(await readFile(file, 'utf8')) as BillingFile;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      state = { accounts: {}, usage: {}, events: {} };
    }
    return state;
  }

  /** Runs `fn` after every earlier operation; `fn` returns whether it changed the state. */
  function serial<T>(fn: (s: BillingFile) => { result: T; changed: boolean }): Promise<T> {
    const run = queue.then(async () => {
      const s = await load();
      // Work on a copy: a failed write must leave memory as the file is.
      const draft = structuredClone(s);
      const { result, changed } = fn(draft);
      if (changed) {
        await atomicWriteFile(file, [JSON.stringify(draft)]);
        state = draft;
      }
      return result;
    });
    queue = run.catch(() => undefined);
    return run;
  }

  const read = <T>(fn: (s: BillingFile) => T) => serial((s) => ({ result: fn(s), changed: false }));
  const counters = (s: BillingFile, tenantId: string, month: string) => {
    const months = (s.usage[tenantId] ??= {});
    return (months[month] ??= { eval_runs: 0, billed_blocks: 0 });
  };

  return {
    getAccount: (tenantId) => read((s) => s.accounts[tenantId] ?? null),
    pastDue: () => read((s) => Object.values(s.accounts).filter((a) => a.status === 'past_due')),
    findByCustomer: (customerId) => read((s) => Object.values(s.accounts).find((a) => a.customer_id === customerId) ?? null),
    updateAccount: (tenantId, fresh, change) =>
      serial<{ account: BillingAccount; changed: boolean }>((s) => {
        const current = s.accounts[tenantId] ?? fresh();
        const next = change(current);
        if (next === null) return { result: { account: current, changed: false }, changed: false };
        s.accounts[tenantId] = next;
        return { result: { account: next, changed: true }, changed: true };
      }),
    incrementEvalRuns: (tenantId, month, max) =>
      serial((s) => {
        const c = counters(s, tenantId, month);
        if (max !== null && c.eval_runs + 1 > max) return { result: null, changed: false };
        c.eval_runs += 1;
        return { result: c.eval_runs, changed: true };
      }),
    decrementEvalRuns: (tenantId, month) =>
      serial((s) => {
        const c = counters(s, tenantId, month);
        if (c.eval_runs === 0) return { result: undefined, changed: false };
        c.eval_runs -= 1;
        return { result: undefined, changed: true };
      }),
    evalRuns: (tenantId, month) => read((s) => s.usage[tenantId]?.[month]?.eval_runs ?? 0),
    usageMonths: (tenantId) =>
      read((s): UsageMonth[] =>
        Object.entries(s.usage[tenantId] ?? {})
          .map(([month, c]) => ({ month, eval_runs: c.eval_runs, billed_blocks: c.billed_blocks }))
          .sort((a, b) => a.month.localeCompare(b.month)),
      ),
    setBilledBlocks: (tenantId, month, from, to) =>
      serial((s) => {
        const c = counters(s, tenantId, month);
        if (c.billed_blocks !== from) return { result: false, changed: false };
        c.billed_blocks = to;
        return { result: true, changed: true };
      }),
    claimEvent: (eventId, type) =>
      serial((s) => {
        if (eventId in s.events) return { result: false, changed: false };
        s.events[eventId] = type;
        return { result: true, changed: true };
      }),
    releaseEvent: (eventId) =>
      serial((s) => {
        if (!(eventId in s.events)) return { result: undefined, changed: false };
        delete s.events[eventId];
        return { result: undefined, changed: true };
      }),
    async countPatterns(tenantId) {
      const scopes = (await patterns.listScopes()).filter((s) => s.tenant_id === tenantId);
      const counts = await Promise.all(scopes.map((s) => patterns.count(s)));
      return counts.reduce((a, b) => a + b, 0);
    },
    async projectIds(tenantId) {
      return (await patterns.listScopes()).filter((s) => s.tenant_id === tenantId).map((s) => s.project_id);
    },
  };
}
