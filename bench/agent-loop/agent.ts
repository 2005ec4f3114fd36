import type { MbppProblem } from './data.js';
import type { StoredRun } from './memories.js';
import type { Sandbox, Verdict } from './sandbox.js';

/**
 * The simulated agent, over the service's HTTP API (the only simulated part of the benchmark):
 * it learns a memory, then for each ask recalls read-only, reuses the top match whatever its
 * tier, runs the asked problem's tests on that code and reports the verdict as an outcome
 * (the first failing assert as the detail).
 */

/** An outcome's detail is at most this long (the outcome contract's bound). */
const MAX_DETAIL = 2_000;

interface RecallAnswer {
  recall_id?: string;
  matches: { pattern_key: string; reuse_tier: string; pattern: { code: string } }[];
}

/** What one ask came to. */
export interface AskResult {
  passed: boolean;
  /** The top match was the asked problem's own clean pattern. */
  rightPattern: boolean;
  /** The top match failed yet was tiered `duplicate`. */
  wrongDuplicate: boolean;
}

export class Agent {
  /** pattern_key → the run learned under it (the first run stored under a key). */
  private readonly runs = new Map<string, StoredRun>();
  outcomesReported = 0;

  constructor(
    private readonly url: string,
    private readonly project: string,
    private readonly sandbox: Sandbox,
  ) {}

  private async post<T>(path: string, body: unknown): Promise<T> {
    const res = await fetch(`${this.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-project-id': this.project },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${text.slice(0, 500)}`);
    return JSON.parse(text) as T;
  }

  async learn(runs: readonly StoredRun[]): Promise<void> {
    for (const run of runs) {
      const answer = await this.post<{ pattern_key?: string }>('/v1/learn', { task: run.task, code: run.code, eval_score: run.eval_score });
      if (answer.pattern_key && !this.runs.has(answer.pattern_key)) this.runs.set(answer.pattern_key, run);
    }
  }

  async ask(problem: MbppProblem, wording: string, limit: number): Promise<AskResult> {
    const answer = await this.post<RecallAnswer>('/v1/recall', { task: wording, limit, readonly: true });
    const top = answer.matches[0];
    if (!top) return { passed: false, rightPattern: false, wrongDuplicate: false };
    const verdict: Verdict = await this.sandbox.verdict(top.pattern.code, problem);
    if (answer.recall_id) {
      await this.post('/v1/outcomes', {
        recall_id: answer.recall_id,
        pattern_key: top.pattern_key,
        passed: verdict.passed,
        ...(verdict.detail ? { detail: verdict.detail.slice(0, MAX_DETAIL) } : {}),
        source: 'tests',
      });
      this.outcomesReported++;
    }
    const run = this.runs.get(top.pattern_key);
    return {
      passed: verdict.passed,
      rightPattern: run?.kind === 'original' && run.problem === problem.id,
      wrongDuplicate: !verdict.passed && top.reuse_tier === 'duplicate',
    };
  }
}
