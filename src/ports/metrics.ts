import type { Instruments } from './observability.js';

/** Values of the spec's gauges, read from storage when /metrics is scraped. */
export interface GaugeValues {
  pattern_count: number;
  avg_eval_score: number;
  total_runs: number;
  success_rate: number;
  reuse_rate: number;
}

/**
 * The metric set behind GET /metrics: the services' instruments plus what the HTTP layer
 * records (requests) and renders (the exposition). The server is typed against this port,
 * so the Prometheus adapter stays behind src/app.ts.
 */
export interface Metrics extends Instruments {
  request(method: string, path: string, statusCode: number, seconds: number): void;
  setGauges(values: GaugeValues): void;
  /** The exposition text. */
  render(): Promise<string>;
  /** The Content-Type of render()'s text. */
  readonly contentType: string;
}
