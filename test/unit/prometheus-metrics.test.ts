import { describe, expect, it } from 'vitest';
import { PrometheusMetrics } from '../../src/adapters/metrics/prometheus.js';

/** The `_count` sample of `metric` for the label set written as `labels` (prom-client's order). */
function countOf(text: string, metric: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${metric}_count{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('Prometheus metrics: histogram children kept per label value', () => {
  it('counts each storage operation and embedding provider under its own labels', async () => {
    const metrics = new PrometheusMetrics();
    metrics.storageOp('json', 'hybridCandidates', 0.001);
    metrics.storageOp('json', 'hybridCandidates', 0.002);
    metrics.storageOp('json', 'recordRecall', 0.003);
    metrics.storageOp('postgres', 'hybridCandidates', 0.004);
    metrics.embedding('local', 0.0005);
    metrics.embedding('local', 0.0006);
    metrics.embedding('openai', 0.2);
    const text = await metrics.render();
    const storage = 'service_storage_op_duration_seconds';
    expect(countOf(text, storage, 'backend="json",operation="hybridCandidates"')).toBe(2);
    expect(countOf(text, storage, 'backend="json",operation="recordRecall"')).toBe(1);
    expect(countOf(text, storage, 'backend="postgres",operation="hybridCandidates"')).toBe(1);
    expect(countOf(text, storage, 'backend="postgres",operation="recordRecall"')).toBeUndefined();
    expect(text).toMatch(/^service_storage_op_duration_seconds_sum\{backend="json",operation="hybridCandidates"\} 0\.003$/m);
    expect(countOf(text, 'service_embedding_duration_seconds', 'provider="local"')).toBe(2);
    expect(countOf(text, 'service_embedding_duration_seconds', 'provider="openai"')).toBe(1);
  });

  it('counts each request under its method, route and status', async () => {
    const metrics = new PrometheusMetrics();
    metrics.request('GET', '/v1/recall', 200, 0.002);
    metrics.request('GET', '/v1/recall', 200, 0.003);
    metrics.request('GET', '/v1/recall', 404, 0.001);
    metrics.request('POST', '/v1/recall', 200, 0.004);
    metrics.request('GET', '/v1/version', 200, 0.001);
    const text = await metrics.render();
    const at = (labels: string) => countOf(text, 'service_request_duration_seconds', labels);
    expect(at('method="GET",path="/v1/recall",status_code="200"')).toBe(2);
    expect(at('method="GET",path="/v1/recall",status_code="404"')).toBe(1);
    expect(at('method="POST",path="/v1/recall",status_code="200"')).toBe(1);
    expect(at('method="GET",path="/v1/version",status_code="200"')).toBe(1);
    expect(text).toMatch(/^service_requests_total\{method="GET",path="\/v1\/recall",status_code="200"\} 2$/m);
  });

  it('keeps two registries apart (one app each)', async () => {
    const a = new PrometheusMetrics();
    const b = new PrometheusMetrics();
    a.storageOp('json', 'get', 0.001);
    expect(countOf(await a.render(), 'service_storage_op_duration_seconds', 'backend="json",operation="get"')).toBe(1);
    expect(countOf(await b.render(), 'service_storage_op_duration_seconds', 'backend="json",operation="get"')).toBeUndefined();
  });
});
