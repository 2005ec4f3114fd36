import type { OutcomeEvidence, OutcomeReport, QuantisedVector, RecallTrace } from '../../../core/outcome-types.js';
import { idFromPatternKey } from '../../../core/types.js';
import type { OutcomeReportResult } from '../../../ports/storage.js';

/** A trace as a journal or snapshot line stores it: the int8 vector as base64 of its bytes. */
export interface TraceLine {
  id: string;
  at: string;
  q: string;
  n: string;
  v?: string;
  s?: number;
  k: string[];
}

export function traceToLine(t: RecallTrace): TraceLine {
  const line: TraceLine = { id: t.recall_id, at: t.at, q: t.query, n: t.query_normalized, k: [...t.pattern_keys] };
  if (t.query_vector) {
    const { values, scale } = t.query_vector;
    line.v = Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
    line.s = scale;
  }
  return line;
}

export function lineToTrace(l: TraceLine): RecallTrace {
  let vector: QuantisedVector | null = null;
  if (typeof l.v === 'string') {
    const bytes = Buffer.from(l.v, 'base64');
    vector = { values: new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength).slice(), scale: l.s ?? 0 };
  }
  return { recall_id: l.id, at: l.at, query: l.q, query_normalized: l.n, query_vector: vector, pattern_keys: [...l.k] };
}

interface StoredTrace {
  trace: RecallTrace;
  ms: number;
  /** pattern id → its outcome for this recall. */
  outcomes: Map<string, OutcomeEvidence>;
}

function timeOf(at: string): number {
  const ms = Date.parse(at);
  return Number.isNaN(ms) ? 0 : ms;
}

/**
 * One scope's recall traces and outcomes in memory (docs/behavior.md "Outcomes"). Changed only
 * through ScopeState.apply, live and on replay alike. Per pattern, its outcomes are kept in time
 * order as ready-made evidence (the report with its recall's query), so ranking's read on every
 * recall is a map lookup and a slice.
 */
export class OutcomeState {
  private readonly traces = new Map<string, StoredTrace>();
  /** pattern id → its outcomes, oldest first. */
  private readonly byPattern = new Map<string, OutcomeEvidence[]>();
  /**
   * pattern id → its outcomes newest first, made on the first read after a change: ranking
   * reads the same candidates' evidence on recall after recall, and a list made once costs
   * neither the copy nor the garbage.
   */
  private readonly newest = new Map<string, readonly OutcomeEvidence[]>();
  private outcomeCount = 0;

  get counts(): { traces: number; outcomes: number } {
    return { traces: this.traces.size, outcomes: this.outcomeCount };
  }

  addTrace(line: TraceLine): void {
    this.dropTrace(line.id);
    const trace = lineToTrace(line);
    this.traces.set(trace.recall_id, { trace, ms: timeOf(trace.at), outcomes: new Map() });
  }

  trace(recallId: string): RecallTrace | null {
    return this.traces.get(recallId)?.trace ?? null;
  }

  /** What report would do now; `patternExists` says whether the pattern is still stored. */
  check(o: OutcomeReport, patternExists: (id: string) => boolean): OutcomeReportResult {
    const stored = this.traces.get(o.recall_id);
    if (!stored) return 'unknown_recall';
    const id = idFromPatternKey(o.pattern_key);
    if (id === null || !stored.trace.pattern_keys.includes(o.pattern_key) || !patternExists(id)) return 'not_a_match';
    return stored.outcomes.has(id) ? 'replaced' : 'stored';
  }

  /** Applies a report that check() accepted (re-checked: replay applies exactly what was acknowledged). */
  report(o: OutcomeReport, patternExists: (id: string) => boolean): void {
    const result = this.check(o, patternExists);
    if (result !== 'stored' && result !== 'replaced') return;
    const stored = this.traces.get(o.recall_id)!;
    const patternId = idFromPatternKey(o.pattern_key)!;
    const old = stored.outcomes.get(patternId);
    if (old) this.removeEvidence(old);
    const t = stored.trace;
    const evidence: OutcomeEvidence = Object.freeze({
      recall_id: o.recall_id, pattern_key: o.pattern_key, passed: o.passed, score: o.score, detail: o.detail, source: o.source, at: o.at,
      pattern_id: patternId, query: t.query, query_normalized: t.query_normalized, query_vector: t.query_vector,
    });
    stored.outcomes.set(patternId, evidence);
    let list = this.byPattern.get(patternId);
    if (!list) this.byPattern.set(patternId, (list = []));
    this.newest.delete(patternId);
    const ms = timeOf(o.at);
    let i = list.length;
    while (i > 0 && timeOf(list[i - 1].at) > ms) i--;
    list.splice(i, 0, evidence);
    this.outcomeCount++;
  }

  /** Newest first, at most `n`: a copy the caller may keep and change. */
  evidence(patternId: string, n: number): OutcomeEvidence[] | undefined {
    const list = this.newestFirst(patternId, n);
    return list && list.slice(0, n);
  }

  /** Newest first, at most `n`, shared: the caller only reads it (ranking, on every recall). */
  newestFirst(patternId: string, n: number): readonly OutcomeEvidence[] | undefined {
    if (n <= 0) return undefined;
    let all = this.newest.get(patternId);
    if (!all) {
      const list = this.byPattern.get(patternId);
      if (!list || list.length === 0) return undefined;
      const made = new Array<OutcomeEvidence>(list.length);
      for (let i = 0; i < made.length; i++) made[i] = list[list.length - 1 - i];
      this.newest.set(patternId, (all = Object.freeze(made)));
    }
    return n >= all.length ? all : all.slice(0, n);
  }

  hasAny(): boolean {
    return this.outcomeCount > 0;
  }

  /** A deleted pattern takes its outcomes with it. */
  dropPattern(patternId: string): void {
    const list = this.byPattern.get(patternId);
    if (!list) return;
    for (const e of list) this.traces.get(e.recall_id)?.outcomes.delete(patternId);
    this.outcomeCount -= list.length;
    this.byPattern.delete(patternId);
    this.newest.delete(patternId);
  }

  /** Traces and outcomes dated before `beforeMs`; returns what went. */
  purge(beforeMs: number): { traces: number; outcomes: number } {
    let traces = 0;
    let outcomes = 0;
    for (const [id, stored] of this.traces) {
      if (stored.ms < beforeMs) {
        outcomes += stored.outcomes.size;
        this.dropTrace(id);
        traces++;
        continue;
      }
      for (const e of [...stored.outcomes.values()]) {
        if (timeOf(e.at) >= beforeMs) continue;
        stored.outcomes.delete(e.pattern_id);
        this.removeEvidence(e);
        outcomes++;
      }
    }
    return { traces, outcomes };
  }

  /** What purge(beforeMs) would remove, without removing it. */
  countBefore(beforeMs: number): { traces: number; outcomes: number } {
    let traces = 0;
    let outcomes = 0;
    for (const stored of this.traces.values()) {
      if (stored.ms < beforeMs) {
        traces++;
        outcomes += stored.outcomes.size;
      } else {
        for (const e of stored.outcomes.values()) if (timeOf(e.at) < beforeMs) outcomes++;
      }
    }
    return { traces, outcomes };
  }

  /** Traces with outcomes, oldest recall first, each with its reports. */
  *traced(): Generator<{ trace: RecallTrace; outcomes: OutcomeReport[] }> {
    const all = [...this.traces.values()].filter((s) => s.outcomes.size > 0).sort((a, b) => a.ms - b.ms);
    for (const s of all) yield { trace: s.trace, outcomes: [...s.outcomes.values()].map(reportOf) };
  }

  /** Every trace and outcome as snapshot items. */
  *items(): Generator<{ t: 't'; r: TraceLine } | { t: 'o'; o: OutcomeReport }> {
    for (const s of this.traces.values()) {
      yield { t: 't', r: traceToLine(s.trace) };
      for (const e of s.outcomes.values()) yield { t: 'o', o: reportOf(e) };
    }
  }

  private dropTrace(recallId: string): void {
    const stored = this.traces.get(recallId);
    if (!stored) return;
    for (const e of stored.outcomes.values()) this.removeEvidence(e);
    this.traces.delete(recallId);
  }

  private removeEvidence(e: OutcomeEvidence): void {
    const list = this.byPattern.get(e.pattern_id);
    if (!list) return;
    const i = list.indexOf(e);
    if (i < 0) return;
    list.splice(i, 1);
    this.newest.delete(e.pattern_id);
    this.outcomeCount--;
    if (list.length === 0) this.byPattern.delete(e.pattern_id);
  }
}

export function reportOf(e: OutcomeReport): OutcomeReport {
  return { recall_id: e.recall_id, pattern_key: e.pattern_key, passed: e.passed, score: e.score, detail: e.detail, source: e.source, at: e.at };
}
