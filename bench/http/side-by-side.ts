import { basename } from 'node:path';
import { percentile } from '../../src/core/stats.js';
import { corpusTasks } from '../corpora.js';
import { admin, openPostgresStorage, withDatabase } from '../postgres.js';
import { copyFill } from './pg-copy.js';
import { runLoad } from './load.js';
import { openPgProbe, pgSpent, settle, type PgProbe } from './pg-probe.js';
import type { HttpBenchOptions, Scenario } from './options.js';
import { measuredRow, type HttpRow } from './report.js';
import { startServe, type ServedStore } from './server.js';

/**
 * `--side-by-side` (PostgreSQL): this build and each --compare build serve at the same time,
 * each on its own copy of one filled database (CREATE DATABASE … TEMPLATE: the same pages,
 * statistics and visibility map), and every run loads all of them at once. Served one after
 * the other, the same build moved by up to half between runs on a shared two-core machine:
 * whatever else the machine does then falls on one build's run and not the other's. Side by
 * side it falls on both; the CPU per request (the server's processes, and the backends of its
 * own database) is compared within each round, and the median over rounds is reported.
 */

interface Contender {
  build: string;
  root: string | undefined;
  databaseUrl: string;
  served?: ServedStore;
  probe?: PgProbe;
}

function databaseOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

export interface SideBySideResult {
  rows: HttpRow[];
  /** Per scenario and connections: each other build's (server + PostgreSQL) CPU per request minus this build's, per round. */
  differences: { scenario: Scenario; connections: number; build: string; msPerRequest: number[] }[];
}

export async function runSideBySide(o: HttpBenchOptions, size: number, log: (m: string) => void): Promise<SideBySideResult> {
  const store = await openPostgresStorage();
  const url = store.serverEnv.SERVICE_DATABASE_URL;
  const admUrl = withDatabase(url, 'postgres');
  const copies: string[] = [];
  const contenders: Contender[] = [];
  try {
    await store.close();
    log(`side by side: filling ${size.toLocaleString('en-US')} patterns by COPY (${url})`);
    await copyFill(url, size, o.modelPath, o.seed, log, corpusTasks(o.corpus));
    // Every build gets a copy, none the filled original: the copies are alike (made the same way,
    // cold alike), which the original, filled and vacuumed in place, is not.
    for (const [i, root] of [undefined, ...o.compare].entries()) {
      const copy = `${databaseOf(url)}_c${i}`;
      await admin(admUrl, `CREATE DATABASE "${copy}" TEMPLATE "${databaseOf(url)}"`);
      copies.push(copy);
      contenders.push({ build: root === undefined ? 'this' : basename(root), root, databaseUrl: withDatabase(url, copy) });
    }
    for (const c of contenders) {
      c.served = await startServe({ ...store.serverEnv, SERVICE_DATABASE_URL: c.databaseUrl }, {
        modelPath: o.modelPath, workers: o.workers, logLevel: o.logLevel, root: c.root,
      });
      c.probe = await openPgProbe(c.databaseUrl);
    }
    const tasks = corpusTasks(o.corpus);
    // Round 0, not counted: every scenario once on every build (JIT, pools, each connection's
    // prepared statements past their first custom plans, the tier policy's first fit).
    log(`  warm-up: every scenario once, ${o.duration} s each`);
    for (const scenario of o.scenarios) {
      await Promise.all(contenders.map((c) => runLoad(c.served!.url, scenario, Math.max(...o.connections), o.duration, o.seed + 900, tasks)));
    }
    const rows: HttpRow[] = [];
    const differences: SideBySideResult['differences'] = [];
    let seed = o.seed + 1000;
    for (let round = 1; round <= o.rounds; round++) {
      for (const connections of o.connections) {
        for (const scenario of o.scenarios) {
          log(`  round ${round}/${o.rounds}: ${scenario} x ${connections} connections on each of ${contenders.length} builds, ${o.duration} s`);
          await settle();
          const pgBefore = await Promise.all(contenders.map((c) => c.probe!.sample()));
          const cpuBefore = contenders.map((c) => c.served!.cpuSeconds());
          // The same tasks for every build: each server sees each task once. The loads share one
          // event loop here, and the first one started measured slightly dearer (this build
          // against itself: +0.17 ms median): the start order turns by one each round.
          const order = contenders.map((_, i) => (i + round) % contenders.length);
          const results = new Array<Awaited<ReturnType<typeof runLoad>>>(contenders.length);
          await Promise.all(order.map(async (i) => { results[i] = await runLoad(contenders[i].served!.url, scenario, connections, o.duration, seed, tasks); }));
          seed++;
          const cpu = contenders.map((c, i) => c.served!.cpuSeconds() - cpuBefore[i]);
          await settle();
          const pgAfter = await Promise.all(contenders.map((c) => c.probe!.sample()));
          const totals: number[] = [];
          for (const [i, c] of contenders.entries()) {
            const row = measuredRow(
              results[i],
              { build: `${c.build} (round ${round})`, storage: 'postgres', size, workers: c.served!.servingProcesses(), versionPerSecond: null },
              { cpuSeconds: cpu[i], pg: pgSpent(pgBefore[i], pgAfter[i]), rssBytes: c.served!.rssBytes() },
            );
            rows.push(row);
            totals.push(row.cpuMsPerRequest + (row.pgCpuMsPerRequest ?? 0));
          }
          for (const [i, c] of contenders.entries()) {
            if (i === 0) continue;
            let entry = differences.find((d) => d.scenario === scenario && d.connections === connections && d.build === c.build);
            if (!entry) differences.push(entry = { scenario, connections, build: c.build, msPerRequest: [] });
            entry.msPerRequest.push(totals[0] - totals[i]);
          }
        }
      }
    }
    return { rows, differences };
  } finally {
    for (const c of contenders) {
      await c.probe?.close().catch(() => undefined);
      await c.served?.stop().catch(() => undefined);
    }
    for (const copy of copies) await admin(admUrl, `DROP DATABASE IF EXISTS "${copy}" WITH (FORCE)`).catch(() => undefined);
    if (o.keepDatabase) log(`  kept: ${url}`);
    else await store.remove();
  }
}

/** "this − other: +0.41 ms (median of 3 rounds: +0.35 … +0.52)" lines. */
export function differenceLines(differences: SideBySideResult['differences']): string[] {
  const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;
  return differences.map((d) => {
    const sorted = [...d.msPerRequest].sort((a, b) => a - b);
    return `${d.scenario} x ${d.connections}: this − ${d.build} = ${signed(percentile(sorted, 50))} ms of server + PostgreSQL CPU per request `
      + `(median of ${sorted.length} rounds; ${sorted.map(signed).join(', ')})`;
  });
}
