import { afterEach, describe, expect, it } from 'vitest';
import { LearnResponse } from '../../src/contracts/memory.js';
import { reply } from '../fixtures/fake-llm/server.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import { startServer, type TestServer } from '../api/helpers.js';
import { PROVIDERS, startLlmServer } from './helpers.js';

const fake = await useFakeLlm();
let t: TestServer | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

// One word apart, other jobs: near-identical by similarity and wording alike (27 words in the
// same order, one changed), so only the LLM can tell them apart. (Words in another order, as in
// "Markdown to HTML" and "HTML to Markdown", are not near-identical at all: learn-word-order.test.ts.)
const DOCS_TASK =
  'Convert the Markdown text of every README file in the docs folder to HTML, keep the relative links, ' +
  'and write each result next to its source file';
const TO_HTML = { task: DOCS_TASK, code: 'html = markdown.markdown(text)', eval_score: 7 };
const TO_PDF = { task: DOCS_TASK.replace('to HTML', 'to PDF'), code: 'pdf = weasyprint.HTML(string=html).write_pdf()', eval_score: 9 };

async function learn(s: TestServer, body: Record<string, unknown>) {
  const res = await s.call('POST', '/v1/learn', body);
  expect(res.statusCode).toBe(200);
  return LearnResponse.parse(res.json());
}

describe.each(PROVIDERS)('learn with verify_duplicates (%s)', (provider) => {
  it('keeps two different jobs with similar words as two patterns when the LLM says so', async () => {
    t = await startLlmServer(fake, provider);
    const first = await learn(t, TO_HTML);
    fake.enqueue(reply.json({ verdict: 'different', reason: 'one renders HTML, the other PDF' }));
    const second = await learn(t, { ...TO_PDF, verify_duplicates: true });
    expect(second).toMatchObject({ stored: true, pattern_count: 2, duplicate_check: { verdict: 'different', model: t.app.deps.llm!.model } });
    expect(second.pattern_key).not.toBe(first.pattern_key);
    const [call] = fake.chatRequests().map((r) => r.call!);
    expect(call.api).toBe(provider === 'provider_a' ? 'openai' : 'anthropic');
    expect(call.prompt).toContain(`<stored_code>\n${TO_HTML.code}\n</stored_code>`);
    expect(call.prompt).toContain(`<code>\n${TO_PDF.code}\n</code>`);
  });
});

describe('learn with verify_duplicates', () => {
  it('merges as usual when the LLM says the runs do the same job', async () => {
    t = await startLlmServer(fake, 'provider_a');
    const first = await learn(t, TO_HTML);
    fake.enqueue(reply.json({ verdict: 'same', reason: 'same conversion' }));
    const second = await learn(t, { ...TO_HTML, code: 'html = mistune.html(text)', eval_score: 9, verify_duplicates: true });
    expect(second).toMatchObject({ stored: true, pattern_count: 1, pattern_key: first.pattern_key, duplicate_check: { verdict: 'same' } });
  });

  it('merges as without the check, with a warning, when the LLM fails or answers nonsense', async () => {
    t = await startLlmServer(fake, 'provider_a');
    await learn(t, TO_HTML);
    fake.enqueue(reply.error(400), reply.text('they look alike to me'));
    const failed = await learn(t, { ...TO_PDF, verify_duplicates: true });
    expect(failed).toMatchObject({ pattern_count: 1, duplicate_check: null, warnings: [expect.stringMatching(/did not answer/)] });
    const garbled = await learn(t, { ...TO_PDF, eval_score: 9.5, verify_duplicates: true });
    expect(garbled).toMatchObject({ pattern_count: 1, duplicate_check: null, warnings: [expect.stringMatching(/could not be read/)] });
  });

  it('asks nothing when there is no near-identical pattern, or when not asked to', async () => {
    t = await startLlmServer(fake, 'provider_a');
    const alone = await learn(t, { ...TO_HTML, verify_duplicates: true });
    expect(alone.duplicate_check).toBeUndefined();
    const unchecked = await learn(t, TO_PDF);
    expect(unchecked).toMatchObject({ pattern_count: 1 });
    expect(unchecked.duplicate_check).toBeUndefined();
    expect(fake.chatRequests()).toHaveLength(0);
  });

  it('answers 422 naming SERVICE_LLM_PROVIDER without an LLM', async () => {
    t = await startServer();
    const res = await t.call('POST', '/v1/learn', { ...TO_HTML, verify_duplicates: true });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(/SERVICE_LLM_PROVIDER/);
  });
});
