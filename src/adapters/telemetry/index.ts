import type { Config } from '../../config.js';
import type { Logger } from '../../ports/observability.js';
import { noopTracer, type Tracer } from '../../ports/tracing.js';

export { traceEmbedder, traceStorage } from './traced.js';

/** The OpenTelemetry packages are optional dependencies: installed by default, omittable. */
const INSTALL_HINT = 'npm install --include=optional (the @opentelemetry/* packages are optional dependencies)';

/**
 * The tracer of this process: the OpenTelemetry SDK when SERVICE_TELEMETRY=true (imported
 * only then), the no-op tracer otherwise. With `instrumentPg` (the process talks to
 * PostgreSQL) query spans come from the pg instrumentation.
 */
export async function createTracer(
  config: Config,
  opts: { logger: Logger; instrumentPg: boolean },
): Promise<Tracer> {
  if (!config.telemetry.enabled) return noopTracer;
  let otel: typeof import('./otel.js');
  try {
    otel = await import('./otel.js');
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new Error(`SERVICE_TELEMETRY=true, but the OpenTelemetry packages are not installed: ${INSTALL_HINT}`, { cause: err });
    }
    throw err;
  }
  return otel.createOtelTracer({
    endpoint: config.telemetry.endpoint,
    serviceName: 'agent-memory-service',
    logger: opts.logger,
    pg: opts.instrumentPg ? (await import('pg')).default : undefined,
  });
}
