import autocannon, { type RequestSpec } from 'autocannon';
import { percentile } from '../../src/core/stats.js';
import { syntheticQueries, syntheticRuns, type TaskSource } from '../synthetic.js';
import type { Scenario } from './options.js';

export interface LoadResult {
  scenario: Scenario;
  connections: number;
  requests: number;
  perSecond: number;
  p50: number;
  p95: number;
  p99: number;
  /** Answers outside 2xx, and connection errors or timeouts (both must stay 0). */
  non2xx: number;
  errors: number;
}

/** Distinct tasks per run, more than any run on this box can send (a repeat would hit the embedding cache). */
const TASKS_PER_RUN = 60_000;
const JSON_HEADERS = { 'content-type': 'application/json' };

/** Every request of a run carries a task no earlier request of the server has seen. */
function requestFor(scenario: Scenario, seed: number, taskFrom: TaskSource): RequestSpec {
  if (scenario === 'version') return { method: 'GET', path: '/v1/version' };
  let next = 0;
  if (scenario === 'learn') {
    const runs = syntheticRuns(seed, TASKS_PER_RUN, taskFrom);
    return {
      method: 'POST', path: '/v1/learn', headers: JSON_HEADERS,
      setupRequest: (req) => {
        const run = runs[next++ % runs.length];
        return { ...req, body: JSON.stringify({ task: run.task, code: run.code, output: run.output, eval_score: run.eval_score }) };
      },
    };
  }
  const tasks = syntheticQueries(seed, TASKS_PER_RUN, new Set(), taskFrom);
  if (scenario === 'recall-get') {
    return {
      method: 'GET',
      setupRequest: (req) => ({ ...req, path: `/v1/recall?task=${encodeURIComponent(tasks[next++ % tasks.length])}` }),
    };
  }
  return {
    method: 'POST', path: '/v1/recall', headers: JSON_HEADERS,
    setupRequest: (req) => ({ ...req, body: JSON.stringify({ task: tasks[next++ % tasks.length] }) }),
  };
}

/** One autocannon run; latencies are recorded per response so p95 is exact (autocannon reports p97.5). */
export function runLoad(url: string, scenario: Scenario, connections: number, seconds: number, seed: number, taskFrom: TaskSource): Promise<LoadResult> {
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url, connections, duration: seconds, timeout: 30, requests: [requestFor(scenario, seed, taskFrom)] },
      (err, result) => {
        if (err) {
          reject(err);
          return;
        }
        resolve({
          scenario,
          connections,
          requests: result.requests.total,
          perSecond: result.requests.total / seconds,
          p50: percentile(latencies, 50),
          p95: percentile(latencies, 95),
          p99: percentile(latencies, 99),
          non2xx: result.non2xx,
          errors: result.errors + result.timeouts,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => { latencies.push(responseTime); });
  });
}
