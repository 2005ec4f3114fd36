/** Fixtures of the Storage contract suite (storage.contract.ts): scopes, vectors, records. */
import type { AuditEvent, FeedbackCluster, PatternRecord, RoiEvent, Scope } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';

export type MakeStorage = () => Promise<{ storage: Storage; cleanup: () => Promise<void> }>;

export const SCOPE_A: Scope = { tenant_id: 'tenant-a', project_id: 'default' };
/** Same tenant, other project. */
export const SCOPE_B: Scope = { tenant_id: 'tenant-a', project_id: 'other_project' };
/** Other tenant, same project id as A. */
export const SCOPE_C: Scope = { tenant_id: 'tenant-c', project_id: 'default' };

export const DIM = 8;

/** A unit vector from components (padded with zeros to DIM). */
export function vec(...components: number[]): Float32Array {
  const v = new Float32Array(DIM);
  components.forEach((c, i) => (v[i] = c));
  const norm = Math.hypot(...v);
  return norm === 0 ? v : v.map((x) => x / norm);
}

/** Unit vector at `deg` degrees from axis 0 towards axis 1: its cosine with e0 is cos(deg). */
export function angled(deg: number): Float32Array {
  const r = (deg * Math.PI) / 180;
  return vec(Math.cos(r), Math.sin(r));
}

/** Time-ordered, path-safe ids: lexical order is numeric order. */
export function pid(n: number): string {
  return `p${String(n).padStart(8, '0')}`;
}

const T0 = Date.UTC(2025, 0, 1);
export function at(seconds: number): string {
  return new Date(T0 + seconds * 1000).toISOString();
}

export function makePattern(n: number, over: Partial<PatternRecord> = {}): PatternRecord {
  return {
    id: pid(n),
    task: `task number ${n}`,
    code: `print(${n})`,
    output: null,
    eval_score: 7,
    success_score: 7,
    reuse_count: 0,
    run_id: null,
    classification: 'internal',
    source: 'api',
    author: null,
    expires_at: null,
    redacted: false,
    created_at: at(n),
    updated_at: at(n),
    last_aged_at: null,
    ...over,
  };
}

export function cluster(id: string, over: Partial<FeedbackCluster> = {}): FeedbackCluster {
  return { id, text: `issue ${id}`, count: 1, score: 0.5, last_seen: at(1), last_decayed_at: null, tasks: ['t'], ...over };
}

export function roi(i: number, over: Partial<RoiEvent> = {}): RoiEvent {
  return { at: at(i), kind: 'recall', best_similarity: 0.5, best_tier: 'fresh', matches: i % 7, latency_ms: 3, ...over };
}

export function audit(i: number, over: Partial<AuditEvent> = {}): AuditEvent {
  return {
    at: at(i), kind: 'auth_failed', tenant_id: 'tenant-a', project_id: 'default', actor: null,
    request_id: `req-${i}`, ip: '127.0.0.1', detail: { n: i }, ...over,
  };
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

export const ids = (xs: { id: string }[]) => xs.map((x) => x.id);
export const hitIds = (xs: { pattern: { id: string } }[]) => xs.map((x) => x.pattern.id);

/**
 * A run of letters and digits no storage can compress into a small index entry (a fixed
 * pseudo-random sequence): a word longer than any keyword (core/bm25.ts MAX_KEYWORD_TERM_BYTES).
 */
export function incompressibleWord(length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let state = 12345;
  let word = '';
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    word += alphabet[Math.floor((state / 2147483648) * alphabet.length)];
  }
  return word;
}
