import { ROI_EVENTS_PER_SCOPE, SUCCESS_EVAL_SCORE } from '../../../core/roi.js';
import type { FeedbackCluster, MetricsCounters, PatternRecord, RoiEvent } from '../../../core/types.js';
import type { EvaluationRun, RunCase } from '../../../contracts/evaluations.js';
import type { JournalOp, SnapshotLine } from './journal-ops.js';
import { encodeVector, KeywordIndex, VectorIndex, VectorMean } from './engine/index.js';
import { OutcomeState } from './outcome-state.js';
import { creditedScore } from '../../../core/outcome-credit.js';

/** Only the newest few observations drive the quality factor; older ones are dropped. */
export const EVALS_KEPT_PER_PATTERN = 50;

interface EvalObservation {
  score: number;
  at: string;
  ms: number;
}

function byTime(a: EvalObservation, b: EvalObservation): number {
  return a.ms - b.ms;
}

/**
 * Everything one scope holds, in memory. `apply` is the single place a mutation changes it,
 * used both live and when replaying the journal, so both paths give the same state. Records
 * are stored as private copies; readers hand out copies too.
 */
export class ScopeState {
  readonly patterns = new Map<string, PatternRecord>();
  readonly index: VectorIndex<PatternRecord>;
  /** Hybrid recall's keyword side and the mean its cosines are centred on (same life as `index`). */
  readonly keywords = new KeywordIndex();
  readonly vectorMean = new VectorMean();
  readonly feedback = new Map<string, FeedbackCluster>();
  readonly skills = new Map<string, string[]>();
  /** Recall traces and reported outcomes (docs/behavior.md "Outcomes"). */
  readonly outcomes = new OutcomeState();
  /** Evaluation runs by id, and each run's cases by case_id in the order first recorded. */
  readonly evalRuns = new Map<string, EvaluationRun>();
  readonly evalCases = new Map<string, Map<string, RunCase>>();
  metrics: MetricsCounters = { runs: 0, successes: 0, eval_sum: 0, recalls: 0, reusing_recalls: 0 };
  /** Oldest first per pattern. */
  private readonly evals = new Map<string, EvalObservation[]>();
  /**
   * The same observations' scores, in the same order, as one array of doubles per pattern.
   * Recall reads them for every candidate (some 30 a request): walking the observation
   * objects, each with its score in a box of its own, was a chain of cache misses per
   * candidate that cost 2.6 % of a loaded JSON recall server's main thread.
   */
  private readonly evalScores = new Map<string, number[]>();
  /** Append order; trimmed lazily to ROI_EVENTS_PER_SCOPE so appends stay O(1) amortised. */
  private roi: RoiEvent[] = [];

  constructor(preferJsKernel = false) {
    this.index = new VectorIndex<PatternRecord>(preferJsKernel);
  }

  /**
   * `unitVector` accompanies put/vec ops: a normalised Float32Array live, or the journal's
   * base64 text on replay (decoded straight into the index).
   */
  apply(op: JournalOp, unitVector?: Float32Array | string): void {
    switch (op.op) {
      case 'put': {
        // A rewritten pattern keeps its first id string, and evals are keyed by it too: the maps
        // recall reads per candidate then find their key by identity, not by comparing text.
        const known = this.patterns.get(op.p.id);
        const rec = known ? { ...op.p, id: known.id } : { ...op.p };
        this.patterns.set(rec.id, rec);
        this.keywords.set(rec.id, rec.task, rec.code);
        if (unitVector !== undefined) this.setVector(rec.id, rec, unitVector);
        else this.index.setItem(rec.id, rec);
        return;
      }
      case 'del': {
        this.patterns.delete(op.id);
        this.keywords.remove(op.id);
        const old = this.index.vectorOf(op.id);
        if (old) this.vectorMean.remove(old);
        this.index.remove(op.id);
        this.evals.delete(op.id);
        this.evalScores.delete(op.id);
        this.skills.delete(op.id);
        this.outcomes.dropPattern(op.id);
        return;
      }
      case 'vec': {
        const rec = this.patterns.get(op.id);
        if (rec && unitVector !== undefined) this.setVector(op.id, rec, unitVector);
        return;
      }
      case 'reuse':
        for (const id of op.ids) {
          const old = this.patterns.get(id);
          if (!old) continue;
          const rec = {
            ...old,
            reuse_count: old.reuse_count + 1,
            success_score: Math.min(10, old.success_score + op.d),
            updated_at: op.at,
          };
          this.patterns.set(id, rec);
          this.index.setItem(id, rec);
        }
        return;
      case 'eval': {
        const rec = this.patterns.get(op.id);
        if (rec) this.addEval(rec.id, op.s, op.at);
        return;
      }
      case 'fb':
        for (const c of op.c) this.feedback.set(c.id, { ...c, tasks: [...c.tasks] });
        return;
      case 'fbdel':
        for (const id of op.ids) this.feedback.delete(id);
        return;
      case 'skills':
        if (op.k.length === 0) this.skills.delete(op.id);
        else if (this.patterns.has(op.id)) this.skills.set(op.id, [...op.k]);
        return;
      case 'run': {
        const m = this.metrics;
        this.metrics = {
          ...m,
          runs: m.runs + 1,
          successes: m.successes + (op.s >= SUCCESS_EVAL_SCORE ? 1 : 0),
          eval_sum: m.eval_sum + op.s,
        };
        return;
      }
      case 'recall':
        this.metrics = {
          ...this.metrics,
          recalls: this.metrics.recalls + 1,
          reusing_recalls: this.metrics.reusing_recalls + (op.r ? 1 : 0),
        };
        return;
      case 'raise': {
        const m = this.metrics;
        this.metrics = {
          runs: Math.max(m.runs, op.m.runs),
          successes: Math.max(m.successes, op.m.successes),
          eval_sum: Math.max(m.eval_sum, op.m.eval_sum),
          recalls: Math.max(m.recalls, op.m.recalls),
          reusing_recalls: Math.max(m.reusing_recalls, op.m.reusing_recalls),
        };
        return;
      }
      case 'roi':
        this.roi.push({ ...op.e });
        if (this.roi.length >= ROI_EVENTS_PER_SCOPE + ROI_EVENTS_PER_SCOPE / 10) this.roi = this.roi.slice(-ROI_EVENTS_PER_SCOPE);
        return;
      case 'trace':
        this.outcomes.addTrace(op.t);
        return;
      case 'outcome':
        this.outcomes.report(op.o, this.patternExists);
        return;
      case 'credit': {
        const old = this.patterns.get(op.id);
        if (!old) return;
        const rec = { ...old, success_score: creditedScore(old.success_score, op.d) };
        this.patterns.set(old.id, rec);
        this.index.setItem(old.id, rec);
        return;
      }
      case 'opurge':
        this.outcomes.purge(Date.parse(op.before));
        return;
      case 'evrun':
        for (const r of op.r) this.evalRuns.set(r.id, structuredClone(r));
        return;
      case 'evcase': {
        if (!this.evalRuns.has(op.run)) return;
        let cases = this.evalCases.get(op.run);
        if (!cases) this.evalCases.set(op.run, (cases = new Map()));
        cases.set(op.c.case_id, structuredClone(op.c));
        return;
      }
      case 'evdel':
        for (const id of op.ids) {
          this.evalRuns.delete(id);
          this.evalCases.delete(id);
        }
        return;
      case 'batch':
        // Each inner op carries its own encoded vector, live and on replay alike.
        for (const inner of op.ops) this.apply(inner, inner.op === 'put' || inner.op === 'vec' ? inner.v : undefined);
        return;
    }
  }

  /** Replays one snapshot line (the header and trailer are handled by the loader). */
  applySnapshotLine(line: SnapshotLine): void {
    switch (line.t) {
      case 'p':
        this.apply({ op: 'put', p: line.p }, line.v);
        return;
      case 'e':
        this.addEval(line.id, line.s, line.at);
        return;
      case 'f':
        this.feedback.set(line.c.id, line.c);
        return;
      case 'k':
        this.skills.set(line.id, line.k);
        return;
      case 'm':
        this.metrics = {
          runs: line.runs, successes: line.successes, eval_sum: line.eval_sum,
          recalls: line.recalls, reusing_recalls: line.reusing_recalls,
        };
        return;
      case 'a':
        this.roi.push(line.e);
        return;
      case 't':
        this.outcomes.addTrace(line.r);
        return;
      case 'o':
        this.outcomes.report(line.o, this.patternExists);
        return;
      case 'r':
        this.apply({ op: 'evrun', r: [line.r] });
        return;
      case 'c':
        this.apply({ op: 'evcase', run: line.run, c: line.c });
        return;
      default:
        return;
    }
  }

  /** Whether a pattern is stored (outcomes are kept only for stored patterns). */
  readonly patternExists = (id: string): boolean => this.patterns.has(id);

  /** Newest-first scores of the last `n` observations, or undefined when there are none. */
  recentEvals(id: string, n: number): number[] | undefined {
    const scores = this.evalScores.get(id);
    if (!scores || scores.length === 0 || n <= 0) return undefined;
    // Sized up front: recall asks this for every candidate.
    const out = new Array<number>(Math.min(n, scores.length));
    for (let i = 0; i < out.length; i++) out[i] = scores[scores.length - 1 - i];
    return out;
  }

  /** ROI events newest first, at or after `sinceMs`, at most `limit`. */
  roiEvents(sinceMs: number | undefined, limit: number): RoiEvent[] {
    const out: RoiEvent[] = [];
    const floor = Math.max(0, this.roi.length - ROI_EVENTS_PER_SCOPE);
    for (let i = this.roi.length - 1; i >= floor && out.length < limit; i--) {
      const e = this.roi[i];
      if (sinceMs !== undefined && !(Date.parse(e.at) >= sinceMs)) continue;
      out.push({ ...e });
    }
    return out;
  }

  /** The whole scope as snapshot lines (newline-terminated), produced lazily. */
  *snapshotLines(seq: number): Generator<string> {
    let count = 0;
    const line = (l: SnapshotLine) => {
      count++;
      return `${JSON.stringify(l)}\n`;
    };
    yield line({ t: 'header', version: 1, seq });
    for (const p of this.patterns.values()) {
      const vec = this.index.vectorOf(p.id);
      yield line(vec ? { t: 'p', p, v: encodeVector(vec) } : { t: 'p', p });
    }
    for (const [id, list] of this.evals) {
      for (const o of list) yield line({ t: 'e', id, s: o.score, at: o.at });
    }
    for (const c of this.feedback.values()) yield line({ t: 'f', c });
    for (const [id, k] of this.skills) yield line({ t: 'k', id, k });
    yield line({ t: 'm', ...this.metrics });
    for (const e of this.roi.slice(-ROI_EVENTS_PER_SCOPE)) yield line({ t: 'a', e });
    for (const item of this.outcomes.items()) yield line(item);
    for (const r of this.evalRuns.values()) {
      yield line({ t: 'r', r });
      for (const c of this.evalCases.get(r.id)?.values() ?? []) yield line({ t: 'c', run: r.id, c });
    }
    yield `${JSON.stringify({ t: 'end', lines: count + 1 } satisfies SnapshotLine)}\n`;
  }

  private setVector(id: string, rec: PatternRecord, unit: Float32Array | string): void {
    const old = this.index.vectorOf(id);
    if (old) this.vectorMean.remove(old);
    const dimension = this.index.dimension;
    if (typeof unit === 'string') this.index.setEncoded(id, rec, unit);
    else this.index.set(id, rec, unit);
    // A vector of a new dimension empties the index (reindex to another model); the mean restarts with it.
    if (dimension !== 0 && this.index.dimension !== dimension) this.vectorMean.reset();
    const stored = this.index.vectorOf(id);
    if (stored) this.vectorMean.add(stored);
  }

  private addEval(id: string, score: number, at: string): void {
    let list = this.evals.get(id);
    let scores = this.evalScores.get(id);
    if (!list || !scores) {
      this.evals.set(id, (list = []));
      this.evalScores.set(id, (scores = []));
    }
    const obs = { score, at, ms: Date.parse(at) || 0 };
    // Usually appended in time order; an out-of-order time (e.g. an import) is placed by time,
    // after any observations with the same time so the later call counts as newer.
    let i = list.length;
    while (i > 0 && byTime(list[i - 1], obs) > 0) i--;
    list.splice(i, 0, obs);
    scores.splice(i, 0, score);
    if (list.length > EVALS_KEPT_PER_PATTERN) {
      const dropped = list.length - EVALS_KEPT_PER_PATTERN;
      list.splice(0, dropped);
      scores.splice(0, dropped);
    }
  }
}
