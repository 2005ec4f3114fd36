import type { EmbeddingLatency } from './embedding.js';
import type { SizeResult } from './scenario.js';

/** Renders rows as an aligned text table: first column left-aligned, the others right-aligned. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]): string =>
    cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(headers), rule, ...rows.map(line)].join('\n');
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const ms = (n: number): string => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0));
const mb = (n: number | null): string => (n === null ? 'n/a' : n.toFixed(0));

export function embeddingSection(results: EmbeddingLatency[]): string {
  const first = results[0];
  return [
    `Local embedding latency (${first.model}, ${first.dimension}-d, no cache; both paths read the same table)`,
    table(
      ['path', 'load ms', 'load CPU ms', 'µs/task, one at a time', `µs/task, batches of ${first.batch.size}`, 'CPU µs/task, batches', 'tasks/s in batches'],
      results.map((e) => [
        e.path, ms(e.loadMs), ms(e.loadCpuMs), e.single.medianUs.toFixed(0), e.batch.medianUsPerTask.toFixed(0), e.batch.cpuUsPerTask.toFixed(0),
        int(e.batch.tasksPerSecond),
      ]),
    ),
    ...(results.length < 2 ? ['(transformers.js path not measured: @huggingface/transformers is not installed)'] : []),
  ].join('\n');
}

export function sizesSection(results: SizeResult[]): string {
  const rows = results.map((r) => [
    r.storageLabel.split(/[ (]/)[0],
    int(r.size),
    r.fill.method === 'learn' ? 'learn service' : 'direct insert*',
    `${r.fill.seconds.toFixed(1)} s`,
    `${int(r.learn.perSecond)}${r.fill.method === 'learn' ? '' : '*'}`,
    `${ms(r.recallUncached.p50)} / ${ms(r.recallUncached.p95)}`,
    `${ms(r.recallCached.p50)} / ${ms(r.recallCached.p95)}`,
    `${ms(r.recallReadonly.p50)} / ${ms(r.recallReadonly.p95)}`,
    r.import ? `${r.import.seconds.toFixed(1)} s (${int(r.import.perSecond)}/s)` : 'skipped',
    mb(r.rssMB),
    mb(r.heapUsedMB),
    mb(r.storeMB),
  ]);
  const notes = [
    'learn/s: patterns per second through the real learn service (redaction, embedding, near-duplicate',
    '  search, insert, eval record, metrics, ROI event), one call at a time.',
    `recall: POST-recall service calls (limit 5, dedup and eval weighting on, side effects on), server-side,`,
    '  no HTTP. Each query runs three times in a row: "uncached" (query embedded), "cached" (embedding',
    '  from the LRU), "read-only" (GET recall, cached, no reuse/metrics/ROI writes: search + ranking alone).',
    'import: records sent through the import service (batch embedding, redaction, inserts) into an empty',
    '  project of the filled store, as one POST /v1/import would.',
    'RSS / heap: the measuring process after the run (its own process per size, after a GC).',
  ];
  const direct = results.filter((r) => r.fill.method === 'direct');
  if (direct.length > 0) {
    notes.push(
      `* ${direct.map((r) => int(r.size)).join(', ')} patterns: filled by direct storage inserts, not the learn service`,
      '  (vectors embedded in batches of 64, one eval record each; no redaction, dedup or metrics);',
      `  learn/s there is measured on ${direct.map((r) => int(r.learn.count)).join(', ')} learns through the learn service on top of the filled store.`,
    );
  }
  const misses = results.filter((r) => r.cachedPassHits !== r.queries);
  if (misses.length > 0) {
    notes.push(`! cached pass did not hit the embedding cache for every query at ${misses.map((r) => int(r.size)).join(', ')}`);
  }
  const merged = results.filter((r) => r.fill.method === 'learn' && r.patternsStored < r.size);
  if (merged.length > 0) {
    notes.push(
      `learn merged near-identical synthetic runs (docs/behavior.md "Learn" 5): ${merged
        .map((r) => `${int(r.patternsStored)} patterns from ${int(r.size)} runs`)
        .join(', ')}.`,
    );
  }
  return [
    'Store sizes',
    table(
      ['storage', 'patterns', 'filled by', 'fill time', 'learn/s', 'recall uncached p50/p95 ms', 'cached', 'read-only', 'import', 'RSS MB', 'heap MB', 'store MB'],
      rows,
    ),
    '',
    ...notes,
  ].join('\n');
}
