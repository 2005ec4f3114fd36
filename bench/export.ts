import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { buildServer } from '../server/app.js';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import type { PatternRecord } from '../src/core/types.js';
import type { Embedder } from '../src/ports/embedder.js';
import { STORAGE_FACTORIES } from './storages.js';

/**
 * `npm run bench -- --export`: the NDJSON export (GET /v1/governance/export over loopback HTTP)
 * of stores of several sizes on each storage. Each (storage, size) runs in a child process of
 * its own. Reported: fill time, export time and rate, and memory of the serving process
 * before the export and at its peak during it (RSS every 10 ms; the live V8 heap after a
 * forced collection every 100 ms), so an export that kept records would show as a live-heap
 * delta growing with the size.
 */
const CHILD_FLAG = '--export-child';
const RESULT_PREFIX = 'EXPORT_RESULT ';
const DIM = 32;
const SCOPE = { tenant_id: 'default', project_id: 'default' };
const FILL_BATCH = 1_000;
const MiB = 1024 * 1024;

interface ExportJob { storage: string; size: number }
interface ExportResult {
  storage: string;
  size: number;
  fillSeconds: number;
  exportSeconds: number;
  lines: number;
  bytes: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
  heapBeforeMiB: number;
  heapPeakMiB: number;
}

/** No model needed: the export never embeds, and the vectors only have to exist. */
const flatEmbedder: Embedder = {
  info: { provider: 'local', model: 'bench-flat', dimension: DIM },
  embed: async (texts) => texts.map(() => Float32Array.from({ length: DIM }, (_, i) => (i === 0 ? 1 : 0))),
};

function record(i: number): PatternRecord {
  const at = new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString();
  return {
    id: `x${String(i).padStart(9, '0')}`, task: `export benchmark task ${i}: parse, transform and store a batch of records`,
    code: `def run_${i}(rows):\n${'    rows = [r for r in rows if r]\n'.repeat(20)}    return rows\n`,
    output: 'ok', eval_score: 7, success_score: 7, reuse_count: 0, run_id: null,
    classification: (['public', 'internal', 'confidential'] as const)[i % 3], source: 'import', author: null,
    expires_at: null, redacted: false, created_at: at, updated_at: at, last_aged_at: null,
  };
}

async function measure(job: ExportJob): Promise<ExportResult> {
  const opened = await STORAGE_FACTORIES[job.storage]();
  const dataPath = await mkdtemp(join(tmpdir(), 'service-bench-export-'));
  try {
    const fillStarted = performance.now();
    for (let start = 0; start < job.size; start += FILL_BATCH) {
      const end = Math.min(job.size, start + FILL_BATCH);
      const vector = Float32Array.from({ length: DIM }, (_, d) => (d === 0 ? 1 : 0.01 * d));
      await Promise.all(Array.from({ length: end - start }, (_, j) => opened.storage.patterns.insert(SCOPE, record(start + j), vector)));
    }
    const fillSeconds = (performance.now() - fillStarted) / 1000;

    const config = loadConfig({
      SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true', SERVICE_LOG_LEVEL: 'silent', SERVICE_LLM_PROVIDER: 'none',
      SERVICE_DATA_PATH: dataPath,
    });
    const app = await createApp(config, { storage: opened.storage, embedder: flatEmbedder }, { runJobs: false });
    const server = await buildServer(app);
    await server.listen({ host: '127.0.0.1', port: 0 });
    const port = (server.server.address() as AddressInfo).port;
    try {
      // First pass: timing and RSS, undisturbed. Second pass: the live heap, with a forced
      // collection every 100 ms (heapUsed without one counts garbage V8 has not collected
      // yet, which says nothing about what the export keeps).
      const timed = await exportOnce(port, job.size, false);
      const traced = await exportOnce(port, job.size, true);
      return {
        ...job, fillSeconds, exportSeconds: timed.seconds, lines: timed.lines, bytes: timed.bytes,
        rssBeforeMiB: timed.before.rss / MiB, rssPeakMiB: timed.rssPeak / MiB,
        heapBeforeMiB: traced.before.heapUsed / MiB, heapPeakMiB: traced.heapPeak / MiB,
      };
    } finally {
      await server.close();
      await app.close();
    }
  } finally {
    await opened.close().catch(() => undefined);
    await opened.remove();
    await rm(dataPath, { recursive: true, force: true });
  }
}

/** One full export read over HTTP, with memory sampled while it runs. */
async function exportOnce(port: number, expected: number, liveHeap: boolean) {
  global.gc?.();
  const before = process.memoryUsage();
  let rssPeak = before.rss;
  let heapPeak = before.heapUsed;
  let ticks = 0;
  const sampler = setInterval(() => {
    if (liveHeap && ++ticks % 10 === 0 && global.gc) {
      global.gc();
      heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
    }
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, 10);
  const started = performance.now();
  let lines = 0;
  let bytes = 0;
  try {
    const res = await request(`http://127.0.0.1:${port}/v1/governance/export`);
    if (res.statusCode !== 200) throw new Error(`export answered ${res.statusCode}: ${await res.body.text()}`);
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      for (let k = chunk.indexOf(0x0a); k >= 0; k = chunk.indexOf(0x0a, k + 1)) lines++;
    }
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  if (lines !== expected) throw new Error(`exported ${lines} lines, expected ${expected}`);
  return { seconds, lines, bytes, before, rssPeak, heapPeak };
}

function inChild(job: ExportJob): Promise<ExportResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), CHILD_FLAG, JSON.stringify(job)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
      if (code !== 0 || !line) reject(new Error(`export bench ${job.storage} ${job.size}: child exited with code ${code}`));
      else resolve(JSON.parse(line.slice(RESULT_PREFIX.length)) as ExportResult);
    });
  });
}

const f1 = (n: number) => n.toFixed(1);

/** Runs every (storage, size) and prints the table. */
export async function runExportBench(storages: string[], sizes: number[]): Promise<void> {
  const results: ExportResult[] = [];
  for (const storage of storages) {
    for (const size of sizes) {
      process.stderr.write(`export: ${size.toLocaleString('en-US')} patterns on ${storage}...\n`);
      results.push(await inChild({ storage, size }));
    }
  }
  const rows = results.map((r) => [
    r.storage, r.size.toLocaleString('en-US'), f1(r.fillSeconds), f1(r.exportSeconds),
    Math.round(r.lines / r.exportSeconds).toLocaleString('en-US'), f1(r.bytes / MiB),
    f1(r.rssBeforeMiB), f1(r.rssPeakMiB), f1(r.rssPeakMiB - r.rssBeforeMiB), f1(r.heapPeakMiB - r.heapBeforeMiB),
  ]);
  const head = ['storage', 'patterns', 'fill s', 'export s', 'records/s', 'MiB sent', 'RSS before', 'RSS peak', 'RSS +', 'live heap +'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (i < 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(['NDJSON export (GET /v1/governance/export over loopback; memory in MiB of the serving process)', fmt(head), ...rows.map(fmt)].join('\n'));
}

if (process.argv[2] === CHILD_FLAG) {
  measure(JSON.parse(process.argv[3]) as ExportJob).then(
    (result) => process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`),
    (err: unknown) => {
      process.stderr.write(`export benchmark failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
