import { afterEach, describe, expect, it } from 'vitest';
import { EvolveResponse } from '../../src/contracts/llm.js';
import type { FeedbackCluster } from '../../src/core/types.js';
import { matchAddressed } from '../../src/services/evolve.js';
import { reply, type ChatCall } from '../fixtures/fake-llm/server.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import { startServer, type TestServer } from '../api/helpers.js';
import { PROVIDERS, startLlmServer } from './helpers.js';

const fake = await useFakeLlm();
let t: TestServer | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const SCOPE = { tenant_id: 'default', project_id: 'default' };
const CURRENT = 'You are a Python developer. Write the code.';
const CANDIDATE = 'You are a Python developer. Validate every input and handle division by zero explicitly.';
const ISSUES = ['Validate user input before processing it.', 'Handle division by zero in averages.', 'Add type hints.'];

function cluster(id: string, text: string, count: number, score = 0.6): FeedbackCluster {
  return { id, text, count, score, last_seen: '2025-01-01T00:00:00.000Z', last_decayed_at: null, tasks: [] };
}

async function seedIssues(server: TestServer): Promise<void> {
  await server.app.deps.storage.feedback.upsert(SCOPE, [
    cluster('c1', ISSUES[0], 5),
    cluster('c2', ISSUES[1], 3),
    cluster('c3', ISSUES[2], 2),
    cluster('c4', 'Reported only once.', 1),
  ]);
}

const isProposer = (call: ChatCall) => /prompt engineer/.test(call.system);
const isJudge = (call: ChatCall) => /judge/.test(call.system);

/** Proposer returns CANDIDATE; the judge scores by which prompt it sees. */
function script(scoresFor: { current: number[]; candidate: number[] }, addressed = [ISSUES[0], 'Handle division by zero']): void {
  const seen = { current: 0, candidate: 0 };
  fake.script((call) => {
    if (isProposer(call)) return reply.json({ improved_prompt: CANDIDATE, changes: ['Added input validation rule'], issues_addressed: addressed });
    if (isJudge(call)) {
      const which = call.prompt.includes(CANDIDATE) ? 'candidate' : 'current';
      const list = scoresFor[which];
      return reply.json({ score: list[seen[which]++ % list.length] });
    }
    return reply.error(400, { message: 'unexpected call' });
  });
}

describe.each(PROVIDERS)('POST /v1/evolve (%s)', (provider) => {
  it('proposes a prompt from the recurring issues and accepts it when the judge agrees', async () => {
    t = await startLlmServer(fake, provider);
    await seedIssues(t);
    script({ current: [4, 5, 9], candidate: [8, 7, 1] });
    const res = await t.call('POST', '/v1/evolve', { role: 'python developer', current_prompt: CURRENT });
    expect(res.statusCode).toBe(200);
    const result = EvolveResponse.parse(res.json());
    expect(result).toMatchObject({
      improved_prompt: CANDIDATE,
      changes: ['Added input validation rule'],
      issues_addressed: [ISSUES[0], ISSUES[1]],
      accepted: true,
      current_score: 5,
      candidate_score: 7,
    });
    expect(result.reason).toMatch(/7/);
    expect(result.reason).toMatch(/5/);
    const calls = fake.chatRequests().map((r) => r.call!);
    expect(calls.filter(isProposer)).toHaveLength(1);
    expect(calls.filter(isJudge)).toHaveLength(6);
    // Only recurring issues (count ≥ 2) reach the proposer, fenced.
    const proposal = calls.find(isProposer)!;
    expect(proposal.prompt).toContain(`<prompt>\n${CURRENT}\n</prompt>`);
    for (const issue of ISSUES) expect(proposal.prompt).toContain(issue);
    expect(proposal.prompt).not.toContain('Reported only once.');
  });
});

describe('evolve behaviour', () => {
  it('rejects a candidate the judge scores lower, returning it all the same', async () => {
    t = await startLlmServer(fake);
    await seedIssues(t);
    script({ current: [7], candidate: [6] });
    const result = (await t.call('POST', '/v1/evolve', { role: 'python developer', current_prompt: CURRENT })).json();
    expect(result.accepted).toBe(false);
    expect(result.improved_prompt).toBe(CANDIDATE);
    expect(result.reason).toMatch(/6.*7|7.*6/);
  });

  it('rejects a candidate that addresses none of the real issues', async () => {
    t = await startLlmServer(fake);
    await seedIssues(t);
    script({ current: [5], candidate: [9] }, ['Make it faster']);
    const result = (await t.call('POST', '/v1/evolve', { role: 'python developer', current_prompt: CURRENT })).json();
    expect(result.accepted).toBe(false);
    expect(result.issues_addressed).toEqual([]);
    expect(result.reason).toMatch(/addresses none/);
  });

  it('uses only the top num_issues issues', async () => {
    t = await startLlmServer(fake);
    await seedIssues(t);
    script({ current: [5], candidate: [6] });
    await t.call('POST', '/v1/evolve', { role: 'python developer', current_prompt: CURRENT, num_issues: 1 });
    const proposal = fake.chatRequests().map((r) => r.call!).find(isProposer)!;
    expect(proposal.prompt).toContain(ISSUES[0]);
    expect(proposal.prompt).not.toContain(ISSUES[1]);
  });

  it('declines without calling the LLM when there are no recurring issues', async () => {
    t = await startLlmServer(fake);
    await t.app.deps.storage.feedback.upsert(SCOPE, [cluster('c4', 'Reported only once.', 1)]);
    const result = (await t.call('POST', '/v1/evolve', { role: 'python developer', current_prompt: CURRENT })).json();
    expect(result).toMatchObject({ accepted: false, improved_prompt: CURRENT, changes: [], issues_addressed: [] });
    expect(result.reason).toMatch(/no recurring issues/);
    expect(fake.chatRequests()).toHaveLength(0);
  });

  it('validates num_issues 1-20 and answers 501 without a provider', async () => {
    t = await startLlmServer(fake);
    for (const num_issues of [0, 21]) {
      expect((await t.call('POST', '/v1/evolve', { role: 'r', current_prompt: CURRENT, num_issues })).statusCode).toBe(422);
    }
    expect((await t.call('POST', '/v1/evolve', { current_prompt: CURRENT })).statusCode).toBe(422);
    await t.close();
    t = await startServer();
    expect((await t.call('POST', '/v1/evolve', { role: 'r', current_prompt: CURRENT })).statusCode).toBe(501);
  });

  it('maps claimed issues by number, quote or close wording only', () => {
    expect(matchAddressed(['2', '#1', 'issue 9'], ISSUES)).toEqual([ISSUES[0], ISSUES[1]]);
    expect(matchAddressed(['add type hints'], ISSUES)).toEqual([ISSUES[2]]);
    expect(matchAddressed(['Improve performance'], ISSUES)).toEqual([]);
  });
});
