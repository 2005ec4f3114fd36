import { afterAll, describe, expect, it } from 'vitest';
import { otlpProtocol } from '../../src/adapters/telemetry/protocol.js';
import { startServer, type TestServer } from '../api/helpers.js';
import { useFakeLlm } from '../fixtures/fake-llm/lifecycle.js';
import { llmEnv, scores } from '../llm/helpers.js';
import { reply } from '../fixtures/fake-llm/server.js';
import { startOtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const fake = await useFakeLlm();
const receiver = await startOtlpReceiver();
afterAll(() => receiver.close());

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

async function waitForJob(t: TestServer, id: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const job = (await t.call('GET', `/v1/jobs/${id}`)).json();
    if (job.status === 'completed' || job.status === 'failed') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${id} did not finish`);
}

function ancestors(span: ReceivedSpan, all: ReceivedSpan[]): string[] {
  const names: string[] = [];
  for (let s: ReceivedSpan | undefined = span; s; s = all.find((p) => p.spanId === s!.parentSpanId)) names.push(s.name);
  return names;
}

describe('tracing (SERVICE_TELEMETRY=true)', () => {
  it('exports request → embedding / storage / llm spans over OTLP, continues the caller\'s trace and passes it to the provider', async () => {
    const stderr: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => { stderr.push(String(chunk)); return true; }) as typeof process.stderr.write;
    try {
      const t = await startServer({
        ...llmEnv(fake, 'provider_a'),
        SERVICE_TELEMETRY: 'true', SERVICE_OTEL_ENDPOINT: receiver.url,
        SERVICE_LOG_LEVEL: 'info', SERVICE_JSON_LOGS: 'true', SERVICE_JOB_POLL_INTERVAL: '0.05',
      });
      try {
        fake.script(() => reply.json(scores(8)));
        const traceparent = `00-${TRACE_ID}-${CALLER_SPAN}-01`;
        const learned = await t.call('POST', '/v1/learn', { task: 'Parse the CSV export of invoices', code: 'def parse(): pass', eval_score: 8 }, { traceparent });
        const evaluated = await t.call('POST', '/v1/evaluate', { task: 'Parse invoices', code: 'def parse(): pass', num_evals: 1 }, { traceparent });
        expect(learned.statusCode).toBe(200);
        expect(evaluated.statusCode).toBe(200);
        const queued = await t.call('POST', '/v1/aging', undefined, { prefer: 'respond-async' });
        expect(queued.statusCode).toBe(202);
        await waitForJob(t, queued.json().job_id);
      } finally {
        await t.close(); // flushes the span batch
      }
    } finally {
      process.stderr.write = write;
    }

    const spans = receiver.spans;
    const learn = spans.find((s) => s.name === 'POST /v1/learn');
    const evaluate = spans.find((s) => s.name === 'POST /v1/evaluate');
    expect(learn, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
    expect(learn!.traceId).toBe(TRACE_ID);
    expect(learn!.parentSpanId).toBe(CALLER_SPAN);
    expect(learn!.attributes).toMatchObject({ 'http.route': '/v1/learn', 'http.response.status_code': 200, 'tenant.id': 'default', 'project.id': 'default' });

    const under = (root: ReceivedSpan) => spans.filter((s) => s !== root && ancestors(s, spans).includes(root.name) && s.traceId === root.traceId);
    const learnChildren = under(learn!).map((s) => s.name);
    expect(learnChildren).toContain('embedding');
    expect(learnChildren.some((n) => n.startsWith('storage patterns.'))).toBe(true);
    const llm = under(evaluate!).find((s) => s.name === 'llm');
    expect(llm?.attributes).toMatchObject({ 'llm.provider': 'openai', 'llm.attempt': 1, 'llm.output_tokens': expect.any(Number) });

    // Never task text or keys in span attributes.
    expect(JSON.stringify(spans)).not.toContain('invoices');
    expect(JSON.stringify(spans)).not.toContain('test-key-a');

    // The provider got the llm span's context.
    const sent = fake.chatRequests()[0].headers.traceparent;
    expect(sent).toBe(`00-${TRACE_ID}-${llm!.spanId}-01`);

    // A background job run is a span of its own.
    expect(spans.find((sp) => sp.name === 'job aging')?.attributes).toMatchObject({ 'job.operation': 'aging', 'tenant.id': 'default' });

    // Log lines written inside a span carry its trace id.
    const logged = stderr.join('').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    expect(logged.find((l) => l.msg === 'llm call')?.trace_id).toBe(TRACE_ID);
  });

  it('sends nothing at all when telemetry is off', async () => {
    const before = receiver.requests;
    const t = await startServer({ SERVICE_OTEL_ENDPOINT: receiver.url });
    try {
      await t.call('POST', '/v1/learn', { task: 'Anything', code: 'x', eval_score: 5 }, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
      await t.call('POST', '/v1/recall', { task: 'Anything' });
      expect(t.app.deps.tracer?.enabled ?? false).toBe(false);
    } finally {
      await t.close();
    }
    expect(receiver.requests).toBe(before);
  });
});

describe('OTLP protocol from the endpoint', () => {
  it('gRPC by default (4317), HTTP for /v1/traces or port 4318', () => {
    expect(otlpProtocol('http://localhost:4317')).toBe('grpc');
    expect(otlpProtocol('http://collector:4318')).toBe('http');
    expect(otlpProtocol('https://otel.example.com/v1/traces')).toBe('http');
  });
});
