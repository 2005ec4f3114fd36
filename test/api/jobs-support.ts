import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { COMPOSER_SYSTEM } from '../../src/services/compose.js';
import { EVALUATOR_SYSTEM } from '../../src/services/evaluate.js';
import { JUDGE_SYSTEM, PROPOSER_SYSTEM } from '../../src/services/evolve.js';
import { reply, type FakeLlm, type ChatCall } from '../fixtures/fake-llm/server.js';
import { scores } from '../llm/helpers.js';
import type { TestServer } from './helpers.js';

/** Shared by the job tests: scripting the fake LLM for every LLM operation, and polling. */

const firstLine = (system: string) => system.split('\n')[0];
export const isEvaluator = (call: ChatCall) => call.system.startsWith(firstLine(EVALUATOR_SYSTEM));
export const isComposer = (call: ChatCall) => call.system.startsWith(firstLine(COMPOSER_SYSTEM));
const isProposer = (call: ChatCall) => call.system.startsWith(firstLine(PROPOSER_SYSTEM));
const isJudge = (call: ChatCall) => call.system.startsWith(firstLine(JUDGE_SYSTEM));

export const CANDIDATE_PROMPT = 'You are a careful developer. Validate every input before using it.';
export const FEEDBACK = 'Validate the input before dividing by it.';

const stage = (name: string, reads: string[], writes: string[]) => ({ name, task: `${name} the sales data`, reads, writes });

/**
 * Deterministic replies keyed on the kind of call, so the same request gets the same answer
 * however calls interleave. `delayMs` slows every reply (to catch a job mid-run).
 */
export function scriptEverything(fake: FakeLlm, opts: { delayMs?: number } = {}): void {
  const delay = { delayMs: opts.delayMs };
  fake.script((call) => {
    if (isEvaluator(call)) return reply.json(scores(6, { feedback: FEEDBACK }), delay);
    if (isComposer(call)) {
      return reply.json({ stages: [stage('load', ['sales.csv'], ['rows.json']), stage('report', ['rows.json'], ['report.md'])] }, delay);
    }
    if (isProposer(call)) {
      return reply.json({ improved_prompt: CANDIDATE_PROMPT, changes: ['validate inputs'], issues_addressed: [FEEDBACK] }, delay);
    }
    if (isJudge(call)) return reply.json({ score: call.prompt.includes(CANDIDATE_PROMPT) ? 8 : 4 }, delay);
    return reply.error(400, { message: 'unexpected call' });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** GET /v1/jobs/{id} until `until` holds (default: a terminal status); the last record. */
export async function pollJob(
  t: TestServer,
  id: string,
  headers: Record<string, string> = {},
  until: (job: { status: string }) => boolean = (job) => !['pending', 'running'].includes(job.status),
): Promise<Record<string, unknown> & { status: string }> {
  for (;;) {
    const res = await t.call('GET', `/v1/jobs/${id}`, undefined, headers);
    expect(res.statusCode).toBe(200);
    const job = res.json();
    if (until(job)) return job;
    await sleep(20);
  }
}

/** Checks a 202 answer to `Prefer: respond-async` and returns the job id. */
export function accepted(res: LightMyRequestResponse): string {
  expect(res.statusCode, res.body).toBe(202);
  const body = res.json();
  expect(body).toEqual({ job_id: expect.stringMatching(/^[0-9a-z]+$/), status: 'pending' });
  expect(res.headers.location).toBe(`/v1/jobs/${body.job_id}`);
  return body.job_id as string;
}
