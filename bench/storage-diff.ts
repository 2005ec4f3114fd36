import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildServer } from '../server/app.js';
import { createApp, type App } from '../src/app.js';
import { loadConfig, type Env } from '../src/config/index.js';
import { seedDistinctTasks } from './distinct-tasks.js';
import { openPostgresStorage } from './postgres.js';
import { syntheticQueries, syntheticRuns } from './synthetic.js';

/**
 * `npm run bench -- --storage-diff`: the same corpus (bench/distinct-tasks.ts, the bundled
 * 384-d model) in a JSON store and in a fresh PostgreSQL database, the same queries to both
 * through the HTTP routes (inject, read-only): how many pages differ, in order or in members,
 * and at the search level how many of PostgreSQL's k nearest (an HNSW walk at half precision)
 * are not among the JSON store's k nearest (a scan of every row, re-scored exactly). Ties are broken alike on both storages
 * (docs/behavior.md "Recall" 3), so what differs is the approximate index.
 */
const PATTERNS = 3_000;
const QUERIES = 200;
const NEAREST = 20;
const SCOPE = { tenant_id: 'default', project_id: 'default' };
const CASES: { name: string; body: Record<string, unknown> }[] = [
  { name: 'default (hybrid, dedup), limit 5', body: { limit: 5 } },
  { name: 'no dedup, limit 5', body: { limit: 5, deduplicate: false } },
  { name: 'default (hybrid, dedup), limit 20', body: { limit: 20 } },
];

export async function runStorageDiffBench(modelPath: string): Promise<void> {
  const base: Env = {
    SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true', SERVICE_LOG_LEVEL: 'silent', SERVICE_LLM_PROVIDER: 'none',
    SERVICE_LOCAL_EMBEDDINGS: '1', SERVICE_EMBEDDING_MODEL_PATH: modelPath,
    SERVICE_RATE_LIMIT_DEFAULT: '1000000', SERVICE_RATE_LIMIT_PER_KEY: '1000000', SERVICE_RATE_LIMIT_EXPENSIVE: '1000000',
  };
  const dataPath = await mkdtemp(join(tmpdir(), 'service-bench-storage-diff-'));
  // A fresh, migrated database; the app below opens its own connections to it.
  const database = await openPostgresStorage();
  await database.close();
  const apps: App[] = [];
  try {
    const json = await createApp(loadConfig({ ...base, SERVICE_DATA_PATH: dataPath }), {}, { runJobs: false });
    apps.push(json);
    const postgres = await createApp(loadConfig({ ...base, ...database.serverEnv }), {}, { runJobs: false });
    apps.push(postgres);
    const servers = [await buildServer(json), await buildServer(postgres)];
    process.stderr.write(`storage-diff: seeding ${PATTERNS.toLocaleString('en-US')} distinct patterns into each storage...\n`);
    for (const app of apps) await seedDistinctTasks(app.deps.storage, app.deps.embedder, SCOPE, PATTERNS);
    const queries = syntheticQueries(99, QUERIES, new Set(syntheticRuns(7, PATTERNS).map((r) => r.task)));

    const lines = [
      `JSON vs PostgreSQL over the same ${PATTERNS.toLocaleString('en-US')} distinct patterns, ${QUERIES} queries (read-only recalls)`,
    ];
    for (const c of CASES) {
      let order = 0;
      let members = 0;
      for (const task of queries) {
        const [a, b] = await Promise.all(servers.map(async (server) => {
          const res = await server.inject({ method: 'POST', url: '/v1/recall', payload: { task, readonly: true, ...c.body } });
          if (res.statusCode !== 200) throw new Error(`recall answered ${res.statusCode}: ${res.body}`);
          return (res.json() as { matches: { pattern_key: string }[] }).matches.map((m) => m.pattern_key);
        }));
        if (a.join() !== b.join()) order++;
        if ([...a].sort().join() !== [...b].sort().join()) members++;
      }
      lines.push(`  ${c.name}: ${order} of ${QUERIES} pages differ (${members} in their members, the rest in order only)`);
    }
    let missed = 0;
    for (const task of queries) {
      const [vector] = await json.deps.embedder.embed([task]);
      const exact = new Set((await json.deps.storage.patterns.search(SCOPE, vector, NEAREST)).map((h) => h.pattern.id));
      missed += (await postgres.deps.storage.patterns.search(SCOPE, vector, NEAREST)).filter((h) => !exact.has(h.pattern.id)).length;
    }
    const rows = QUERIES * NEAREST;
    lines.push(`  search, ${NEAREST} nearest: ${missed} of ${rows} rows PostgreSQL returned (${((100 * missed) / rows).toFixed(1)} %) are not among the JSON store's ${NEAREST}`);
    console.log(lines.join('\n'));
    for (const server of servers) await server.close();
  } finally {
    for (const app of apps) await app.close();
    await database.remove();
    await rm(dataPath, { recursive: true, force: true });
  }
}
