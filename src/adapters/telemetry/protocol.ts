/**
 * OTLP over gRPC (port 4317, the default) unless the endpoint says HTTP: a path ending in
 * /v1/traces, or the OTLP/HTTP port 4318.
 */
export function otlpProtocol(endpoint: string): 'grpc' | 'http' {
  const url = new URL(endpoint);
  if (/\/v1\/traces\/?$/.test(url.pathname)) return 'http';
  if (url.port === '4318') return 'http';
  return 'grpc';
}
