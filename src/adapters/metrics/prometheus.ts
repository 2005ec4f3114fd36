import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { GaugeValues, Metrics } from '../../ports/metrics.js';
import type { VerificationEvent } from '../../ports/observability.js';

export type { GaugeValues };

const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SLOW_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const FAST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface Observer {
  observe(seconds: number): void;
}

interface RequestSeries {
  count: { inc(): void };
  duration: Observer;
}

/**
 * The value of `key` in `children`, made by `make` the first time. Holds a metric's children
 * per label value: prom-client's observe with a label object validates and hashes the labels
 * on every call (1.4 % of a loaded recall server's main thread). Label values are bounded
 * (providers, backends, operation names).
 */
function childOf<K, T>(children: Map<K, T>, key: K, make: () => T): T {
  let child = children.get(key);
  if (child === undefined) children.set(key, (child = make()));
  return child;
}

/**
 * Every metric of docs/behavior.md "Metrics exposed", in a registry of its own (not prom-client's
 * global one) so several apps in one process (tests) never collide. Services feed it through
 * the Instruments port; the HTTP layer records requests and renders the exposition.
 */
export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();

  private readonly gauges = {
    pattern_count: this.gauge('service_pattern_count', 'Stored patterns across all scopes'),
    avg_eval_score: this.gauge('service_avg_eval_score', 'Mean eval_score of all learn runs'),
    total_runs: this.gauge('service_total_runs', 'Learn runs recorded'),
    success_rate: this.gauge('service_success_rate', 'Share of learn runs with eval_score >= 5'),
    reuse_rate: this.gauge('service_reuse_rate', 'Share of recalls whose best match was reusable'),
  };

  private readonly requests = new Counter({
    name: 'service_requests_total',
    help: 'HTTP requests by method, route pattern and status',
    labelNames: ['method', 'path', 'status_code'] as const,
    registers: [this.registry],
  });
  private readonly requestDuration = new Histogram({
    name: 'service_request_duration_seconds',
    help: 'HTTP request duration by method, route pattern and status',
    labelNames: ['method', 'path', 'status_code'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });
  private readonly seriesByMethod = new Map<string, Map<string, Map<number, RequestSeries>>>();
  /** Histogram children by label values (childOf): every recall observes two storage calls and an embedding. */
  private readonly embeddingChildren = new Map<string, Observer>();
  private readonly storageChildren = new Map<string, Map<string, Observer>>();
  private readonly recallHits = new Counter({
    name: 'service_recall_hits_total',
    help: 'Recalls that returned a reusable (duplicate or adapt) match',
    registers: [this.registry],
  });
  private readonly recallMisses = new Counter({
    name: 'service_recall_misses_total',
    help: 'Recalls that returned no reusable match',
    registers: [this.registry],
  });
  private readonly jobsSubmitted = new Counter({
    name: 'service_jobs_submitted_total',
    help: 'Background jobs submitted',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });
  private readonly jobsCompleted = new Counter({
    name: 'service_jobs_completed_total',
    help: 'Background jobs finished',
    labelNames: ['operation', 'status'] as const,
    registers: [this.registry],
  });
  private readonly llmDuration = new Histogram({
    name: 'service_llm_call_duration_seconds',
    help: 'LLM call duration',
    labelNames: ['provider', 'model'] as const,
    buckets: SLOW_BUCKETS,
    registers: [this.registry],
  });
  private readonly embeddingDuration = new Histogram({
    name: 'service_embedding_duration_seconds',
    help: 'Embedding call duration',
    labelNames: ['provider'] as const,
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });
  private readonly storageDuration = new Histogram({
    name: 'service_storage_op_duration_seconds',
    help: 'Storage operation duration',
    labelNames: ['backend', 'operation'] as const,
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });

  private readonly verifyCalls = new Counter({
    name: 'service_reuse_verify_calls_total',
    help: 'LLM calls made to verify reuse (recall verify, learn verify_duplicates) by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly verifyVerdicts = new Counter({
    name: 'service_reuse_verify_verdicts_total',
    help: 'Reuse verdicts given by the LLM, by verdict',
    labelNames: ['verdict'] as const,
    registers: [this.registry],
  });
  private readonly verifyCacheHits = new Counter({
    name: 'service_reuse_verify_cache_hits_total',
    help: 'Reuse verdicts served from the cache without an LLM call',
    registers: [this.registry],
  });

  recallHit(): void {
    this.recallHits.inc();
  }
  recallMiss(): void {
    this.recallMisses.inc();
  }
  llmCall(provider: string, model: string, seconds: number): void {
    this.llmDuration.observe({ provider, model }, seconds);
  }
  embedding(provider: string, seconds: number): void {
    childOf(this.embeddingChildren, provider, () => this.embeddingDuration.labels({ provider })).observe(seconds);
  }
  storageOp(backend: string, operation: string, seconds: number): void {
    const byOperation = childOf(this.storageChildren, backend, () => new Map<string, Observer>());
    childOf(byOperation, operation, () => this.storageDuration.labels({ backend, operation })).observe(seconds);
  }
  jobSubmitted(operation: string): void {
    this.jobsSubmitted.inc({ operation });
  }
  jobCompleted(operation: string, status: string): void {
    this.jobsCompleted.inc({ operation, status });
  }
  verification(event: VerificationEvent): void {
    if (event.kind === 'call') this.verifyCalls.inc({ outcome: event.outcome });
    else if (event.kind === 'verdict') this.verifyVerdicts.inc({ verdict: event.verdict });
    else this.verifyCacheHits.inc();
  }

  /** One finished HTTP request; `path` is the route pattern, never the raw URL (bounded labels). */
  request(method: string, path: string, statusCode: number, seconds: number): void {
    const series = this.requestSeries(method, path, statusCode);
    series.count.inc();
    series.duration.observe(seconds);
  }

  /**
   * The counter and histogram children of one (method, route, status), made once and then
   * found by three map lookups: prom-client would otherwise build and hash a label object on
   * every request. The label sets are bounded (route patterns, never raw URLs).
   */
  private requestSeries(method: string, path: string, statusCode: number): RequestSeries {
    const byPath = childOf(this.seriesByMethod, method, () => new Map<string, Map<number, RequestSeries>>());
    const byStatus = childOf(byPath, path, () => new Map<number, RequestSeries>());
    return childOf(byStatus, statusCode, () => {
      const labels = { method, path, status_code: String(statusCode) };
      return { count: this.requests.labels(labels), duration: this.requestDuration.labels(labels) };
    });
  }

  setGauges(values: GaugeValues): void {
    for (const name of Object.keys(this.gauges) as (keyof GaugeValues)[]) this.gauges[name].set(values[name]);
  }

  /** The text exposition format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private gauge(name: string, help: string): Gauge {
    return new Gauge({ name, help, registers: [this.registry] });
  }
}
