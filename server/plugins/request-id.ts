import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** An incoming id is reused only when it is short and plain, so it cannot inject into logs. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's genReqId: the caller's X-Request-Id when safe, else a fresh UUID. */
export function requestIdFrom(raw: IncomingMessage): string {
  const header = raw.headers['x-request-id'];
  const given = Array.isArray(header) ? header[0] : header;
  return given && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Echoes the id on every response (errors included); error bodies carry it as request_id. */
export function installRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
}
