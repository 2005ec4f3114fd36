import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as received over OTLP/HTTP JSON, attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, string | number | boolean>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };

/**
 * A minimal OTLP/HTTP receiver on loopback: accepts JSON export requests at /v1/traces and
 * keeps every span and every request it saw (the telemetry-off test counts the requests).
 */
export async function startOtlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; requests: number; close(): Promise<void> }> {
  const state = { spans: [] as ReceivedSpan[], requests: 0 };
  const server: Server = createServer((req, res) => {
    state.requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      for (const rs of body.resourceSpans ?? []) {
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            const attributes: ReceivedSpan['attributes'] = {};
            for (const a of s.attributes ?? []) {
              const v = a.value as OtlpValue;
              attributes[a.key] = v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue ?? '';
            }
            state.spans.push({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, attributes });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    get spans() { return state.spans; },
    get requests() { return state.requests; },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
