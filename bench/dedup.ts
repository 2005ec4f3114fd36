import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { buildServer } from '../server/app.js';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { MAX_DEDUP_PAGE_END } from '../src/core/dedup.js';
import type { Scope } from '../src/core/types.js';
import { seedDistinctTasks } from './distinct-tasks.js';
import { FAMILY_TASKS, seedNearDuplicates } from './near-duplicates.js';

/**
 * `npm run bench -- --dedup`: deduplicated recall, in-process through the HTTP routes (inject),
 * JSON storage, over two corpora: 10,000 near-identical patterns (bench/near-duplicates.ts: few
 * survivors, many drops) and 12,000 distinct patterns (bench/distinct-tasks.ts: nearly every
 * candidate survives, so a deep page keeps thousands, the costly case for dedup), each deep
 * page next to the same page without dedup. Per case: the median recall time, the median time
 * of a health check sent alongside each recall, the longest event-loop stall seen while the
 * recalls ran (perf_hooks, 1 ms resolution), and the most CPU time the process spent between
 * two turns of the loop (a setImmediate ticker reading process.cpuUsage: on a busy machine the
 * wall-clock stall also counts time the process was not running at all, the CPU figure only
 * the work done without handing the loop back, though it counts the process's
 * garbage-collection and compiler threads too), the process CPU per recall, and the longest
 * garbage-collection pause (perf_hooks 'gc' entries).
 */
const PATTERNS = 10_000;
const DISTINCT_PATTERNS = 12_000;
const RUNS = 20;
/** Deep pages cost the most: fewer runs keep the benchmark within a minute or two. */
const DEEP_RUNS = 3;
const SCOPE = { tenant_id: 'default', project_id: 'default' };
const DISTINCT_SCOPE = { tenant_id: 'default', project_id: 'distinct' };
/** The deepest page a deduplicated recall may ask for (offset + limit at the cap). */
const DEEPEST_DEDUP_OFFSET = MAX_DEDUP_PAGE_END - 50;

interface Case {
  name: string;
  body: Record<string, unknown>;
  /** Default RUNS: the first recall is a case of its own, as it fits the project's tier policy. */
  runs?: number;
}

const NEAR_IDENTICAL_CASES: Case[] = [
  { name: 'first recall (fits the tier policy)', body: { limit: 5 }, runs: 1 },
  { name: 'dedup, limit 5', body: { limit: 5 } },
  { name: 'dedup, limit 50', body: { limit: 50 } },
  { name: `dedup, limit 50, offset ${DEEPEST_DEDUP_OFFSET}`, body: { limit: 50, offset: DEEPEST_DEDUP_OFFSET } },
  { name: 'no dedup, limit 50 (reference)', body: { limit: 50, deduplicate: false } },
];

const DISTINCT_CASES: Case[] = [
  { name: 'first recall (fits the tier policy)', body: { limit: 5 }, runs: 1 },
  { name: 'dedup, limit 50', body: { limit: 50 } },
  { name: `dedup, limit 50, offset ${DEEPEST_DEDUP_OFFSET}`, body: { limit: 50, offset: DEEPEST_DEDUP_OFFSET }, runs: DEEP_RUNS },
  { name: 'dedup, limit 50, offset 9950', body: { limit: 50, offset: 9_950 }, runs: DEEP_RUNS },
  { name: 'no dedup, limit 50, offset 9950 (reference)', body: { limit: 50, offset: 9_950, deduplicate: false }, runs: DEEP_RUNS },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function runDedupBench(modelPath: string): Promise<void> {
  const dataPath = await mkdtemp(join(tmpdir(), 'service-bench-dedup-'));
  const config = loadConfig({
    SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true', SERVICE_LOG_LEVEL: 'silent', SERVICE_LLM_PROVIDER: 'none',
    SERVICE_DATA_PATH: dataPath, SERVICE_LOCAL_EMBEDDINGS: '1', SERVICE_EMBEDDING_MODEL_PATH: modelPath,
    SERVICE_RATE_LIMIT_DEFAULT: '1000000', SERVICE_RATE_LIMIT_PER_KEY: '1000000',
  });
  const app = await createApp(config, {}, { runJobs: false });
  const server = await buildServer(app);
  try {
    process.stderr.write(`dedup: seeding ${PATTERNS.toLocaleString('en-US')} near-identical patterns...\n`);
    await seedNearDuplicates(app.deps.storage, app.deps.embedder, SCOPE, PATTERNS);
    process.stderr.write(`dedup: seeding ${DISTINCT_PATTERNS.toLocaleString('en-US')} distinct patterns...\n`);
    const distinctQuery = await seedDistinctTasks(app.deps.storage, app.deps.embedder, DISTINCT_SCOPE, DISTINCT_PATTERNS);
    // The first inject loads light-my-request and its dependencies (~10 ms of module loading in
    // one turn, which requests over HTTP never pay): done before measuring. The first recall,
    // which fits the project's tier policy, is measured alone.
    await server.inject({ method: 'GET', url: '/v1/health' });
    const head = ['case', 'status', 'matches', 'recall ms (median)', 'CPU ms per recall', 'health ms (median)', 'max loop stall ms', 'max CPU ms between turns', 'longest GC pause ms'];
    const near = await measureCases(server, SCOPE, `${FAMILY_TASKS[0]} variant 123456`, NEAR_IDENTICAL_CASES);
    const distinct = await measureCases(server, DISTINCT_SCOPE, distinctQuery, DISTINCT_CASES);
    const widths = head.map((h, i) => Math.max(h.length, ...[...near, ...distinct].map((r) => r[i].length)));
    const fmt = (cells: string[]) => cells.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
    console.log([
      `Deduplicated recall over ${PATTERNS.toLocaleString('en-US')} near-identical patterns (JSON storage, ${RUNS} runs per case but the first, a health check sent with each)`,
      fmt(head), ...near.map(fmt), '',
      `Deduplicated recall over ${DISTINCT_PATTERNS.toLocaleString('en-US')} distinct patterns (JSON storage, ${DEEP_RUNS} runs per deep page; deduplicated pages end at offset + limit ≤ ${MAX_DEDUP_PAGE_END})`,
      fmt(head), ...distinct.map(fmt),
    ].join('\n'));
  } finally {
    await server.close();
    await app.close();
    await rm(dataPath, { recursive: true, force: true });
  }
}

/** One table row per case: the answer's status and size, and what the recalls cost. */
async function measureCases(server: Awaited<ReturnType<typeof buildServer>>, scope: Scope, task: string, cases: Case[]): Promise<string[][]> {
  const headers = { 'x-project-id': scope.project_id };
  const rows: string[][] = [];
  for (const c of cases) {
    const recallMs: number[] = [];
    const healthMs: number[] = [];
    let matches = 0;
    let status = 0;
    const runs = c.runs ?? RUNS;
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const turns = cpuBetweenTurns();
    const gc = longestGcPause();
    const cpuBefore = process.cpuUsage();
    for (let run = 0; run < runs; run++) {
      const started = performance.now();
      const health = server.inject({ method: 'GET', url: '/v1/health' }).then(() => healthMs.push(performance.now() - started));
      const res = await server.inject({ method: 'POST', url: '/v1/recall', headers, payload: { task, readonly: true, ...c.body } });
      recallMs.push(performance.now() - started);
      await health;
      status = res.statusCode;
      // A deduplicated page past the cap answers 422 by design (docs/behavior.md "Recall" 5).
      if (res.statusCode !== 200 && res.statusCode !== 422) throw new Error(`recall answered ${res.statusCode}: ${res.body}`);
      matches = res.statusCode === 200 ? (res.json() as { matches: unknown[] }).matches.length : 0;
    }
    const cpu = process.cpuUsage(cpuBefore);
    loop.disable();
    const cpuMax = await turns.stop();
    const gcMax = await gc.stop();
    rows.push([
      c.name, String(status), String(matches), median(recallMs).toFixed(1), ((cpu.user + cpu.system) / 1000 / runs).toFixed(1),
      median(healthMs).toFixed(1), (loop.max / 1e6).toFixed(1), cpuMax.toFixed(1), gcMax.toFixed(1),
    ]);
  }
  return rows;
}

/**
 * The longest garbage-collection pause (ms) until stop(): a stall the recall's own slicing
 * cannot shorten (a scavenge copies what the recalls in flight keep alive), told apart here.
 */
function longestGcPause(): { stop(): Promise<number> } {
  let max = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) max = Math.max(max, entry.duration);
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    async stop() {
      // GC entries are delivered asynchronously: one more turn before reading.
      await new Promise((resolve) => setImmediate(resolve));
      observer.disconnect();
      return max;
    },
  };
}

/** Most process CPU time (ms) spent between two consecutive turns of the event loop, until stop(). */
function cpuBetweenTurns(): { stop(): Promise<number> } {
  let running = true;
  let max = 0;
  let last = process.cpuUsage();
  const tick = () => {
    const used = process.cpuUsage(last);
    max = Math.max(max, (used.user + used.system) / 1000);
    last = process.cpuUsage();
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    async stop() {
      await new Promise((resolve) => setImmediate(resolve));
      running = false;
      return max;
    },
  };
}
