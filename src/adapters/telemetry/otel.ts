import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as HttpTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { Logger } from '../../ports/observability.js';
import type { RequestSpan, SpanAttributes, SpanHandle, Tracer } from '../../ports/tracing.js';
import { otlpProtocol } from './protocol.js';

/**
 * The OpenTelemetry implementation of the Tracer port: spans batched and exported over OTLP
 * (gRPC, or HTTP when the endpoint says so). Loaded with a dynamic import only when
 * SERVICE_TELEMETRY=true, so the SDK costs nothing otherwise.
 */
export interface OtelOptions {
  endpoint: string;
  serviceName: string;
  logger: Logger;
  /** The `pg` module to instrument (PostgreSQL storage or DB auth), already imported. */
  pg?: unknown;
}

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  get: (carrier: Record<string, string | string[] | undefined>, key: string) => carrier[key],
  keys: (carrier: Record<string, string | string[] | undefined>) => Object.keys(carrier),
};
const headerSetter = { set: (carrier: Record<string, string>, key: string, value: string) => { carrier[key] = value; } };

let contextManagerInstalled = false;
function installContextManager(): void {
  // Process-wide, once: every provider of the process (tests build several) shares it.
  if (contextManagerInstalled) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  contextManagerInstalled = true;
}

function exporterFor(endpoint: string): SpanExporter {
  const protocol = otlpProtocol(endpoint);
  if (protocol === 'http') {
    const url = /\/v1\/traces\/?$/.test(new URL(endpoint).pathname) ? endpoint : `${endpoint.replace(/\/+$/, '')}/v1/traces`;
    return new HttpTraceExporter({ url });
  }
  return new GrpcTraceExporter({ url: endpoint });
}

function handle(span: Span): SpanHandle {
  return { setAttributes: (attributes: SpanAttributes) => void span.setAttributes(attributes as Attributes) };
}

function fail(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
}

export async function createOtelTracer(opts: OtelOptions): Promise<Tracer> {
  installContextManager();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporterFor(opts.endpoint), { scheduledDelayMillis: 1000 })],
  });
  const tracer = provider.getTracer('agent-memory-service');
  if (opts.pg) await instrumentPg(opts.pg, provider);
  opts.logger.info({ endpoint: opts.endpoint, protocol: otlpProtocol(opts.endpoint) }, 'tracing: exporting spans over OTLP');

  return {
    enabled: true,
    inSpan<T>(name: string, attributes: SpanAttributes, fn: (span: SpanHandle) => T): T {
      return tracer.startActiveSpan(name, { attributes: attributes as Attributes }, (span) => {
        let result: T;
        try {
          result = fn(handle(span));
        } catch (err) {
          fail(span, err);
          span.end();
          throw err;
        }
        if (result instanceof Promise) {
          return result.then(
            (value) => { span.end(); return value; },
            (err: unknown) => { fail(span, err); span.end(); throw err; },
          ) as T;
        }
        span.end();
        return result;
      });
    },
    startRequest(name, headers, attributes): RequestSpan {
      const parent: Context = propagator.extract(ROOT_CONTEXT, headers, headerGetter);
      const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes: attributes as Attributes }, parent);
      const active = trace.setSpan(parent, span);
      return {
        setAttributes: (a) => void span.setAttributes(a as Attributes),
        run: (fn) => context.with(active, fn),
        end(statusCode) {
          span.setAttribute('http.response.status_code', statusCode);
          if (statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      };
    },
    outboundHeaders() {
      const carrier: Record<string, string> = {};
      propagator.inject(context.active(), carrier, headerSetter);
      return carrier;
    },
    currentTraceId() {
      const span = trace.getSpan(context.active());
      return span ? span.spanContext().traceId : null;
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}

/**
 * Query spans from the pg instrumentation. The service imports `pg` as an ES module before
 * telemetry starts, so the require hook would never see it: the already loaded module is
 * patched directly (its Client prototype, shared by every pool).
 */
async function instrumentPg(pg: unknown, provider: NodeTracerProvider): Promise<void> {
  const { PgInstrumentation } = await import('@opentelemetry/instrumentation-pg');
  const instrumentation = new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true });
  instrumentation.setTracerProvider(provider);
  const definition = instrumentation.getModuleDefinitions().find((d) => d.name === 'pg');
  definition?.patch?.(pg);
}
