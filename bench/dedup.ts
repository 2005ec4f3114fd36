import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { buildServer } from '../server/app.js';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { FAMILY_TASKS, seedNearDuplicates } from './near-duplicates.js';

/**
 * `npm run bench -- --dedup`: deduplicated recall over 10,000 near-identical patterns (JSON
 * storage, bench/near-duplicates.ts), in-process through the HTTP routes (inject). Per case:
 * the median recall time, the median time of a health check sent alongside each recall, the
 * longest event-loop stall seen while the recalls ran (perf_hooks, 1 ms resolution), and the
 * most CPU time the process spent between two turns of the loop (a setImmediate ticker reading
 * process.cpuUsage: on a busy machine the wall-clock stall also counts time the process was
 * not running at all, the CPU figure only the work done without handing the loop back, though
 * it counts the process's garbage-collection and compiler threads too), and the longest
 * garbage-collection pause (perf_hooks 'gc' entries).
 */
const PATTERNS = 10_000;
const RUNS = 20;
const SCOPE = { tenant_id: 'default', project_id: 'default' };
/** `runs` (default RUNS): the first recall is a case of its own, as it fits the project's tier policy. */
const CASES: { name: string; body: Record<string, unknown>; runs?: number }[] = [
  { name: 'first recall (fits the tier policy)', body: { limit: 5 }, runs: 1 },
  { name: 'dedup, limit 5', body: { limit: 5 } },
  { name: 'dedup, limit 50', body: { limit: 50 } },
  { name: 'dedup, limit 50, offset 9000', body: { limit: 50, offset: 9_000 } },
  { name: 'no dedup, limit 50 (reference)', body: { limit: 50, deduplicate: false } },
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
    const task = `${FAMILY_TASKS[0]} variant 123456`;
    // The first inject loads light-my-request and its dependencies (~10 ms of module loading in
    // one turn, which requests over HTTP never pay): done before measuring. The first recall,
    // which fits the project's tier policy, is measured alone.
    await server.inject({ method: 'GET', url: '/v1/health' });
    const rows: string[][] = [];
    for (const c of CASES) {
      const recallMs: number[] = [];
      const healthMs: number[] = [];
      let matches = 0;
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      const turns = cpuBetweenTurns();
      const gc = longestGcPause();
      for (let run = 0; run < (c.runs ?? RUNS); run++) {
        const started = performance.now();
        const health = server.inject({ method: 'GET', url: '/v1/health' }).then(() => healthMs.push(performance.now() - started));
        const res = await server.inject({ method: 'POST', url: '/v1/recall', payload: { task, readonly: true, ...c.body } });
        recallMs.push(performance.now() - started);
        await health;
        if (res.statusCode !== 200) throw new Error(`recall answered ${res.statusCode}: ${res.body}`);
        matches = (res.json() as { matches: unknown[] }).matches.length;
      }
      loop.disable();
      const cpuMax = await turns.stop();
      const gcMax = await gc.stop();
      rows.push([c.name, String(matches), median(recallMs).toFixed(1), median(healthMs).toFixed(1), (loop.max / 1e6).toFixed(1), cpuMax.toFixed(1), gcMax.toFixed(1)]);
    }
    const head = ['case', 'matches', 'recall ms (median)', 'health ms (median)', 'max loop stall ms', 'max CPU ms between turns', 'longest GC pause ms'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const fmt = (cells: string[]) => cells.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
    console.log([`Deduplicated recall over ${PATTERNS.toLocaleString('en-US')} near-identical patterns (JSON storage, ${RUNS} runs per case but the first, a health check sent with each)`,
      fmt(head), ...rows.map(fmt)].join('\n'));
  } finally {
    await server.close();
    await app.close();
    await rm(dataPath, { recursive: true, force: true });
  }
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
