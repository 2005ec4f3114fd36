import { mkdirSync } from 'node:fs';
import { basename } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { relaxedInt8Works } from '../../src/adapters/storage/json/engine/int8-kernel.js';
import { STORAGE_FACTORIES } from '../storages.js';
import { DEV_SCOPE, fillStore } from './fill.js';
import { corpusTasks } from '../corpora.js';
import type { TaskSource } from '../synthetic.js';
import { runLoad } from './load.js';
import { copyFill, type ScaleFigures } from './pg-copy.js';
import { openPgProbe, pgSpent, settle, type PgProbe } from './pg-probe.js';
import type { HttpBenchOptions } from './options.js';
import { httpTable, measuredRow, scaleTable, type HttpRow } from './report.js';
import { startServe, type ServedStore } from './server.js';
import { differenceLines, runSideBySide } from './side-by-side.js';

/** A short run before the measured ones: JIT, pools and caches warm. */
const WARMUP_SECONDS = 2;

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** Every scenario at every connection level against one served store. */
async function measureServed(
  served: ServedStore, build: string, storage: string, size: number, workers: number, o: HttpBenchOptions, pgProbe: PgProbe | null, tasks: TaskSource,
): Promise<HttpRow[]> {
  await runLoad(served.url, 'recall-post', 16, WARMUP_SECONDS, o.seed + 900, tasks);
  const rows: HttpRow[] = [];
  let seed = o.seed + 1000;
  for (const connections of o.connections) {
    let versionPerSecond: number | null = null;
    for (const scenario of o.scenarios) {
      log(`  ${build} ${storage} ${size.toLocaleString('en-US')}: ${scenario} x ${connections} connections, ${o.duration} s`);
      const pgBefore = pgProbe ? (await settle(), await pgProbe.sample()) : null;
      const cpuBefore = served.cpuSeconds();
      const result = await runLoad(served.url, scenario, connections, o.duration, seed++, tasks);
      const cpu = served.cpuSeconds() - cpuBefore;
      const pg = pgProbe && pgBefore ? (await settle(), pgSpent(pgBefore, await pgProbe.sample())) : null;
      if (scenario === 'version') versionPerSecond = result.perSecond;
      rows.push(measuredRow(result, { build, storage, size, workers, versionPerSecond }, { cpuSeconds: cpu, pg, rssBytes: served.rssBytes() }));
    }
  }
  return rows;
}

async function measureStore(storage: 'json' | 'postgres', size: number, o: HttpBenchOptions, scale: ScaleFigures[]): Promise<HttpRow[]> {
  const store = await STORAGE_FACTORIES[storage]();
  const tasks = corpusTasks(o.corpus);
  let closed = false;
  try {
    const started = performance.now();
    const databaseUrl = store.serverEnv.SERVICE_DATABASE_URL;
    if (databaseUrl) {
      log(`${storage}: filling ${size.toLocaleString('en-US')} patterns by COPY (real embeddings), HNSW index built after (${databaseUrl})`);
      scale.push(await copyFill(databaseUrl, size, o.modelPath, o.seed, log, tasks));
    } else {
      log(`${storage}: filling ${size.toLocaleString('en-US')} patterns (synthetic vectors, direct writes)`);
      await fillStore(store, size, o.modelPath, o.seed, tasks);
    }
    log(`  filled in ${((performance.now() - started) / 1000).toFixed(1)} s (${await store.storage.patterns.count(DEV_SCOPE)} stored)`);
    // JSON storage allows one process: the bench lets go of it before the server opens it.
    await store.close();
    closed = true;
    const rows: HttpRow[] = [];
    for (const root of [undefined, ...o.compare]) {
      const served = await startServe(store.serverEnv, { modelPath: o.modelPath, workers: o.workers, profileDir: o.profileDir, logLevel: o.logLevel, root });
      const pgProbe = databaseUrl ? await openPgProbe(databaseUrl) : null;
      try {
        rows.push(...(await measureServed(served, root === undefined ? 'this' : basename(root), storage, size, served.servingProcesses(), o, pgProbe, tasks)));
      } finally {
        await pgProbe?.close();
        await served.stop();
      }
    }
    return rows;
  } finally {
    if (!closed) await store.close().catch(() => undefined);
    if (o.keepDatabase && store.serverEnv.SERVICE_DATABASE_URL) log(`  kept: ${store.serverEnv.SERVICE_DATABASE_URL}`);
    else await store.remove();
  }
}

/** `npm run bench -- --http`: the server under load from autocannon, per storage and size; 1 when any run saw a non-2xx answer or an error. */
export async function runHttpBench(o: HttpBenchOptions): Promise<number> {
  if (o.profileDir) mkdirSync(o.profileDir, { recursive: true });
  const started = performance.now();
  const rows: HttpRow[] = [];
  const scale: ScaleFigures[] = [];
  const differences: string[] = [];
  for (const size of o.sideBySide ? o.sizes : []) {
    const result = await runSideBySide(o, size, log);
    rows.push(...result.rows);
    differences.push(`${size.toLocaleString('en-US')} patterns:`, ...differenceLines(result.differences).map((l) => `  ${l}`));
  }
  for (const storage of o.sideBySide ? [] : o.storages) {
    for (const size of o.sizes) {
      const measured = await measureStore(storage, size, o, scale);
      rows.push(...measured);
      // A long run (a million patterns) shows each size's figures as soon as it has them.
      log(`\n${httpTable(measured)}\n${scale.length > 0 ? `${scaleTable(scale.slice(-1))}\n` : ''}`);
    }
  }
  const cpu = cpus();
  console.log([
    'Agent memory service HTTP benchmark (autocannon on the same machine as the server)',
    `node ${process.version}, ${cpu.length} CPU(s) ${cpu[0]?.model ?? ''}; load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
    `model: ${o.modelPath}`,
    `JSON store int8 scan kernel (this node): ${int8KernelName()}`,
    `${o.duration} s per run; distinct tasks per request (${o.corpus} corpus); dev auth; rate limits raised; seed ${o.seed}`,
    "x version: req/s over GET /v1/version's at the same storage, size and connections (the ratio is what compares across noisy runs)",
    'cpu ms/req: user+system CPU of the server and its workers (/proc/<pid>/stat) per answered request',
    "pg ms/req: the same for PostgreSQL's backends serving the database; pg tx/req: its transactions (pg_stat_database) per request",
    `server log level: ${o.logLevel} (logs read and discarded by the benchmark)`,
    ...(o.profileDir ? [`CPU profiles: ${o.profileDir}`] : []),
    '',
    httpTable(rows),
    '',
    ...(scale.length > 0 ? [scaleTable(scale), ''] : []),
    ...(differences.length > 0 ? ['Side by side (every build served and loaded at once, each on its own copy of the database):', ...differences, ''] : []),
    `total ${((performance.now() - started) / 1000).toFixed(0)} s`,
  ].join('\n'));
  const failed = rows.filter((r) => r.non2xx > 0 || r.errors > 0);
  if (failed.length > 0) log(`${failed.length} run(s) had non-2xx answers or errors`);
  return failed.length > 0 ? 1 : 0;
}

/** The int8 kernel a JSON server on this node picks (the same detection runs in the server). */
function int8KernelName(): string {
  return relaxedInt8Works() ? 'relaxed SIMD' : 'plain SIMD (JavaScript where WebAssembly SIMD is missing)';
}
