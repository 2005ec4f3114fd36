import type { FastifyInstance } from 'fastify';
import type { ZodType } from 'zod';
import { ErrorBody } from '../../src/contracts/errors.js';
import { JobAccepted } from '../../src/contracts/jobs.js';
import { ROUTE_DOCS, openApiPath } from './route-docs.js';

/**
 * Test-time guard against drift between what routes answer and what the contracts (and so
 * the OpenAPI document) promise: every JSON answer is parsed with its documented schema, and
 * a mismatch turns the answer into a 500 that names the route and the failing fields. The API
 * test suites build their servers with it, so every response they provoke is checked.
 */
export function installResponseCheck(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const type = String(reply.getHeader('content-type') ?? '');
    if (!type.includes('application/json') || typeof payload !== 'string') return payload;
    const url = request.routeOptions.url;
    const status = reply.statusCode;
    const doc = url ? ROUTE_DOCS[`${request.method} ${openApiPath(url)}`] : undefined;
    const documented = doc && !('text' in doc.response) ? (doc.response as ZodType) : undefined;
    let schema: ZodType | undefined;
    if (status >= 400) schema = doc?.sameShapeErrors?.includes(status) ? documented : ErrorBody;
    else if (status === 202) schema = JobAccepted;
    else schema = documented;
    if (!schema) return payload;
    const result = schema.safeParse(JSON.parse(payload));
    if (result.success) return payload;
    const where = `${request.method} ${url ?? request.url} → ${status}`;
    const issues = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    console.error(`response drift: ${where}: ${issues}`);
    reply.status(500);
    return JSON.stringify({ code: 'internal_error', detail: `response drift: ${where} does not match its contract: ${issues}` });
  });
}
