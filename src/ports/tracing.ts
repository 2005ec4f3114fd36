/**
 * Distributed tracing, as the services and adapters see it. The OpenTelemetry adapter
 * implements it when SERVICE_TELEMETRY=true; otherwise `noopTracer` stands in and the SDK is
 * never loaded. Attributes never carry task text, code or keys.
 */
export type SpanAttributes = Record<string, string | number | boolean>;

export interface SpanHandle {
  setAttributes(attributes: SpanAttributes): void;
}

/** A server span for one inbound request; `run` executes the rest of the request inside it. */
export interface RequestSpan extends SpanHandle {
  run<T>(fn: () => T): T;
  end(statusCode: number): void;
}

export interface Tracer {
  readonly enabled: boolean;
  /** Runs `fn` in a child span of the active one (a root span when none is active). */
  inSpan<T>(name: string, attributes: SpanAttributes, fn: (span: SpanHandle) => T): T;
  /** A server span whose parent comes from the request's W3C `traceparent` header, if any. */
  startRequest(name: string, headers: Record<string, string | string[] | undefined>, attributes: SpanAttributes): RequestSpan;
  /** Headers carrying the active span to an outbound call (`traceparent`, `tracestate`). */
  outboundHeaders(): Record<string, string>;
  /** The active span's trace id, for log lines; null when none. */
  currentTraceId(): string | null;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

const noopSpan: RequestSpan = { setAttributes() {}, run: (fn) => fn(), end() {} };

export const noopTracer: Tracer = {
  enabled: false,
  inSpan: (_name, _attributes, fn) => fn(noopSpan),
  startRequest: () => noopSpan,
  outboundHeaders: () => ({}),
  currentTraceId: () => null,
  shutdown: async () => undefined,
};
