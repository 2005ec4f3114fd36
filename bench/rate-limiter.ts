/**
 * `node dist/bench/rate-limiter.js` (after `npm run build`): what a rate-limit decision costs
 * (docs/many-hosts.md "Figures"). The in-memory limiter, and the limiter shared through
 * PostgreSQL in its two regimes: a client far under its limit (grants taken in blocks, one
 * statement per 16 decisions) and every decision a round trip (limits of 15, where every grant
 * is taken alone). One caller at a time, then 16 at once. Statements are counted from the
 * table's own statistics (rows inserted + updated), read after the limiter's connections end.
 * A fresh database on the server named by SERVICE_DATABASE_URL (default: the local one),
 * dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateUp } from '../src/adapters/migrations/index.js';
import { createMemoryRateLimiter } from '../src/adapters/rate-limit/memory.js';
import { createPostgresRateLimiter } from '../src/adapters/storage/postgres/rate-limits.js';
import { systemClock } from '../src/ports/clock.js';
import { noopInstruments, silentLogger } from '../src/ports/observability.js';
import type { RateLimiter } from '../src/ports/rate-limiter.js';
import { admin, withDatabase } from './postgres.js';

const SERVER_URL = process.env.SERVICE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DECISIONS = 16_000;
const CONCURRENCY = 16;
/** Decades: no window turns during a run. */
const WINDOW_MS = 1e12;

interface Regime {
  name: string;
  bucket: (i: number) => string;
  limit: number;
}

const REGIMES: Regime[] = [
  { name: 'far under the limit', bucket: () => 'key:far-under', limit: 1_000_000_000 },
  // 1,000 buckets of 15, each hit in turn: every decision asks (15 grants, then the one refusal).
  { name: 'every decision asks', bucket: (i) => `key:near-${i % 1000}`, limit: 15 },
];

async function run(limiter: RateLimiter, regime: Regime, prefix: string, concurrency: number): Promise<number> {
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < DECISIONS; i = next++) await limiter.hit(`${prefix}${regime.bucket(i)}`, regime.limit);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ((performance.now() - started) * 1000) / DECISIONS;
}

async function statements(url: string): Promise<number> {
  const res = await admin(url, "SELECT coalesce(sum(n_tup_ins + n_tup_upd), 0)::int AS n FROM pg_stat_user_tables WHERE relname = 'rate_limit_windows'");
  return (res.rows[0] as { n: number }).n;
}

async function main(): Promise<void> {
  const name = `service_bench_limits_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin(SERVER_URL, `CREATE DATABASE "${name}"`);
  const url = withDatabase(SERVER_URL, name);
  try {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    await admin(url, 'CREATE EXTENSION IF NOT EXISTS vector');
    try {
      await migrateUp(pool);
    } finally {
      await pool.end();
    }
    const rows: string[] = ['limiter     regime                callers  µs/decision  statements/decision'];
    const memory = createMemoryRateLimiter(systemClock, WINDOW_MS);
    for (const regime of REGIMES) {
      for (const concurrency of [1, CONCURRENCY]) {
        const us = await run(memory, regime, `m${concurrency}`, concurrency);
        rows.push(`memory      ${regime.name.padEnd(20)}  ${String(concurrency).padStart(7)}  ${us.toFixed(2).padStart(11)}  ${'0'.padStart(19)}`);
      }
    }
    for (const regime of REGIMES) {
      for (const concurrency of [1, CONCURRENCY]) {
        const before = await statements(url);
        const limiter = createPostgresRateLimiter({
          connectionString: url, clock: systemClock, logger: silentLogger, instruments: noopInstruments,
          windowMs: WINDOW_MS, timeoutMs: 30_000, connectTimeoutMs: 5_000,
        });
        const us = await run(limiter, regime, `p${concurrency}`, concurrency);
        // Ended sessions report their statistics; give the collector a moment.
        await limiter.close();
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const per = ((await statements(url)) - before) / DECISIONS;
        rows.push(`postgres    ${regime.name.padEnd(20)}  ${String(concurrency).padStart(7)}  ${us.toFixed(2).padStart(11)}  ${per.toFixed(3).padStart(19)}`);
      }
    }
    process.stdout.write(`${rows.join('\n')}\n(${DECISIONS} decisions each; database ${name}, dropped after)\n`);
  } finally {
    await admin(SERVER_URL, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
}

await main();
