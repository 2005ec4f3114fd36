import type { Config } from '../../config/index.js';
import { importOptional } from '../../core/optional-module.js';
import type { Logger } from '../../ports/observability.js';
import { noopTracer, type Tracer } from '../../ports/tracing.js';

export { traceEmbedder, traceStorage } from './traced.js';

/** The OpenTelemetry packages are optional dependencies: installed by default, omittable. */
const INSTALL_COMMAND = 'npm install --include=optional';

/**
 * The tracer of this process: the OpenTelemetry SDK when SERVICE_TELEMETRY=true (imported
 * only then), the no-op tracer otherwise. With `instrumentPg` (the process talks to
 * PostgreSQL) query spans come from the pg instrumentation.
 */
export async function createTracer(
  config: Config,
  opts: { logger: Logger; instrumentPg: boolean },
): Promise<Tracer> {
  if (!config.observability.telemetry.enabled) return noopTracer;
  const otel = await importOptional(() => import('./otel.js'), 'SERVICE_TELEMETRY=true (the @opentelemetry/* packages)', INSTALL_COMMAND);
  return otel.createOtelTracer({
    endpoint: config.observability.telemetry.endpoint,
    serviceName: 'agent-memory-service',
    logger: opts.logger,
    pg: opts.instrumentPg ? (await import('pg')).default : undefined,
  });
}
