import type { FastifyInstance } from 'fastify';
import type { ZodType } from 'zod';
import { ErrorBody } from '../../src/contracts/errors.js';
import { responseSchema } from '../define-route.js';

/**
 * Test-time guard against drift between what routes answer and what their declarations
 * promise (defineRoute already refuses a success body that breaks its schema, in production
 * too). Here, in addition: every error body must be an ErrorBody, a refused success body names
 * its failing fields, and a success body may carry no field its schema does not declare (the
 * schema would not show it, so the OpenAPI document would not either). A mismatch turns the
 * answer into a 500 that names the route and the fields. The API test suites build their
 * servers with it, so every response they provoke is checked.
 */
export function installResponseCheck(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const where = `${request.method} ${request.routeOptions.url ?? request.url} → ${reply.statusCode}`;
    if (request.responseDrift) return drift(request.responseDrift);
    const type = String(reply.getHeader('content-type') ?? '');
    if (!type.includes('application/json') || typeof payload !== 'string') return payload;
    const contract = request.routeOptions.config?.contract;
    const status = reply.statusCode;
    const schema: ZodType | null = contract ? responseSchema(contract, status) : null;
    const body = JSON.parse(payload) as unknown;
    const checkWith = schema ?? (status >= 400 ? ErrorBody : null);
    if (!checkWith) return payload;
    const result = checkWith.safeParse(body);
    if (!result.success) {
      const issues = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      return drift(`response drift: ${where} does not match its contract: ${issues}`);
    }
    const undeclared = schema ? undeclaredFields(body, result.data, '') : [];
    if (undeclared.length > 0) return drift(`response drift: ${where} has fields its contract does not declare: ${undeclared.join(', ')}`);
    return payload;

    function drift(detail: string): string {
      console.error(detail);
      reply.status(500);
      return JSON.stringify({ code: 'internal_error', detail });
    }
  });
}

/** Paths of `sent` that parsing with the schema dropped (an object schema strips unknown keys). */
function undeclaredFields(sent: unknown, parsed: unknown, at: string): string[] {
  if (Array.isArray(sent) && Array.isArray(parsed)) return sent.flatMap((item, i) => undeclaredFields(item, parsed[i], `${at}${i}.`));
  if (!isObject(sent) || !isObject(parsed)) return [];
  return Object.keys(sent).flatMap((key) => {
    if (!(key in parsed)) return sent[key] === undefined ? [] : [`${at}${key}`];
    return undeclaredFields(sent[key], parsed[key], `${at}${key}.`);
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
