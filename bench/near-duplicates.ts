import type { PatternRecord, Scope } from '../src/core/types.js';
import type { Embedder } from '../src/ports/embedder.js';
import type { Storage } from '../src/ports/storage.js';

/**
 * A hostile corpus for deduplicated recall (issue 25 row 3): N patterns whose tasks fall into
 * FAMILIES groups of near-duplicates (one sentence plus "variant <n>": token Jaccard > 0.7
 * within a family, low across), all with near-identical vectors, so every candidate a search
 * returns is close to the query and the families interleave in rank order. Used by
 * test/api/recall-bounded.test.ts and `npm run bench -- --dedup`.
 */
export const FAMILY_TASKS = [
  'Resize every JPEG image in the uploads folder to a thumbnail',
  'Parse a CSV export and average the price column per region',
  'Send a weekly email digest of failed nightly builds to maintainers',
  'Rotate the database credentials stored in the secrets manager',
  'Compress old application log files into gzip archives nightly',
  'Validate incoming JSON payloads against the published schema',
  'Deploy the static website bundle to the content delivery network',
  'Train a small text classifier on labelled support tickets',
  'Translate product descriptions from German into Spanish',
  'Scrape competitor prices from public web shop listings',
  'Merge duplicate customer records by normalised phone number',
  'Render monthly invoices as PDF documents with company logo',
  'Backfill missing timestamps in the events warehouse table',
  'Monitor disk usage on build agents and alert on low space',
  'Generate release notes from merged pull request titles',
  'Convert recorded meeting audio into searchable transcripts',
  'Schedule reminder notifications before calendar appointments',
  'Detect anomalous login attempts from unusual countries',
  'Upload nightly database snapshots to cold object storage',
  'Benchmark query latency of the search cluster under load',
  'Resample sensor readings to fixed five minute intervals',
  'Lint markdown documentation and fix broken relative links',
  'Crop scanned receipts and extract totals with optical recognition',
  'Reconcile bank statement lines with accounting ledger entries',
  'Cluster free text survey answers into recurring themes',
] as const;

export const FAMILIES = FAMILY_TASKS.length;

/** Family of pattern i (interleaved: neighbours in rank order belong to different families). */
export const familyOf = (i: number) => i % FAMILIES;
export const taskOf = (i: number) => `${FAMILY_TASKS[familyOf(i)]} variant ${i}`;
/** One solution per family: a family's variants are one problem, which dedup (comparing code too) folds. */
export const codeOf = (i: number) => `solve_family_${familyOf(i)}(source)`;

/** Seeds `count` patterns straight into storage (no embedding per pattern: one vector, nudged). */
export async function seedNearDuplicates(storage: Storage, embedder: Embedder, scope: Scope, count: number): Promise<Float32Array> {
  const [base] = await embedder.embed([FAMILY_TASKS[0]]);
  const at = new Date(Date.UTC(2025, 0, 1)).toISOString();
  const batch = 500;
  for (let from = 0; from < count; from += batch) {
    const writes = [];
    for (let i = from; i < Math.min(count, from + batch); i++) {
      const vector = Float32Array.from(base);
      // A small, deterministic nudge per pattern: every cosine stays near 1, and ties are rare.
      vector[(i * 31) % vector.length] += (0.02 * ((i * 7919) % 97)) / 97;
      const record: PatternRecord = {
        id: `nd${String(i).padStart(8, '0')}`, task: taskOf(i), code: codeOf(i), output: null, eval_score: 7,
        success_score: 7, reuse_count: 0, run_id: null, classification: 'internal', source: 'import', author: null,
        expires_at: null, redacted: false, created_at: at, updated_at: at, last_aged_at: null,
      };
      writes.push({ record, vector, replace: false });
    }
    if (!storage.patterns.writeBatch) throw new Error('this storage has no writeBatch');
    await storage.patterns.writeBatch(scope, writes);
  }
  return base;
}
