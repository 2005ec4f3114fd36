import { beforeEach, describe, expect, it } from 'vitest';
import { LearnResponse, RecallResponse } from '../../src/contracts/memory.js';
import { reply, type ChatCall } from '../fixtures/fake-llm/server.js';
import { runCli } from '../support/cli.js';
import { useServerWithFakeLlm } from '../support/llm-server.js';

/** `service recall --verify` and `service learn --verify-duplicates` against a real server and the fake LLM. */

const ctx = useServerWithFakeLlm('svc-cli-verify-', {
  provider: 'provider_b',
  env: { SERVICE_TIER_ADAPT: '0.3', SERVICE_TIER_DUPLICATE: '0.99' },
});
beforeEach(() => ctx.fake.reset());

const cli = (args: string[]) => runCli([...args, '--url', ctx.server.url, '--json']);
const candidates = (call: ChatCall) => [...call.prompt.matchAll(/Candidate (\d+):/g)].map((m) => Number(m[1]));

// One word apart, other jobs: near-identical by similarity and wording alike (the same words in
// the same order but one), so only the LLM can tell them apart. Words in another order are not
// near-identical at all (test/api/learn-word-order.test.ts).
const DOCS_TASK =
  'Convert the Markdown text of every README file in the docs folder to HTML, keep the relative links, ' +
  'and write each result next to its source file';
const TO_PDF_TASK = DOCS_TASK.replace('to HTML', 'to PDF');

describe('verified reuse from the command line', () => {
  it('learn --verify-duplicates keeps a same-words, different-job run apart; recall --verify demotes', async () => {
    const html = await cli(['learn', '--task', DOCS_TASK, '--code', 'markdown.markdown(text)', '--eval-score', '7']);
    expect(html.code).toBe(0);
    ctx.fake.enqueue(reply.json({ verdict: 'different', reason: 'one renders HTML, the other PDF' }));
    const pdf = await cli(['learn', '--task', TO_PDF_TASK, '--code', 'weasyprint.HTML(string=html).write_pdf()', '--eval-score', '9', '--verify-duplicates']);
    expect(pdf.code).toBe(0);
    expect(LearnResponse.parse(JSON.parse(pdf.stdout))).toMatchObject({ pattern_count: 2, duplicate_check: { verdict: 'different' } });

    ctx.fake.script((call) => reply.json({ verdicts: candidates(call).map((n) => ({ candidate: n, verdict: 'fresh', reason: 'wrong direction' })) }));
    const res = await cli(['recall', TO_PDF_TASK, '--verify', '--readonly']);
    expect(res.code).toBe(0);
    const body = RecallResponse.parse(JSON.parse(res.stdout));
    expect(body.matches.length).toBeGreaterThan(0);
    for (const m of body.matches) expect(m).toMatchObject({ reuse_tier: 'fresh', verification: { verdict: 'fresh', reason: 'wrong direction' } });
    // One call for learn's check, one for the whole recall page.
    expect(ctx.fake.chatRequests()).toHaveLength(2);
  });
});
