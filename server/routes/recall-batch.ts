import type { FastifyInstance } from 'fastify';
import { RecallRequest, type RecallBatchResponse } from '../../src/contracts/memory.js';
import { routes } from '../../src/contracts/routes.js';
import { RECALL_BATCH_MAX } from '../../src/core/vocabulary.js';
import type { ErrorBody } from '../../src/contracts/errors.js';
import { DomainError } from '../../src/core/errors.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { recall } from '../../src/services/recall.js';
import { authed } from '../context.js';
import { defineRoute } from '../define-route.js';
import { parseWith } from '../http.js';
import { mapError } from '../plugins/errors.js';

/**
 * (+) POST /v1/recall/batch (docs/behavior.md "Recall" 10): up to RECALL_BATCH_MAX recalls in
 * one request, so a batch is not throttled to a crawl by the per-request rate limit. It
 * counts as one expensive request (the LLM endpoints' budget). Each item is what POST
 * /v1/recall would answer for it: a refused item (a blank task, a bad limit) is its error in
 * its place, with the status and body it would have had; a fault of the service itself (the
 * storage down) fails the whole request as it would fail each recall.
 */
export function recallBatchRoute(app: FastifyInstance, deps: ServiceDeps): void {
  defineRoute(app, routes.recallBatch, {
    permission: 'recall', rateClass: 'expensive',
    tag: 'memory', summary: `Up to ${RECALL_BATCH_MAX} recalls in one request; each answer or error in its place (+).`,
    description: `Each item is a ${routes.recall.method} ${routes.recall.path} body and is answered as that route would answer it. Counts as one expensive request.`,
    handler: async ({ body }, request): Promise<RecallBatchResponse> => {
      const { scope } = authed(request);
      const results: RecallBatchResponse['results'] = [];
      for (const item of body.requests) {
        try {
          const { readonly, ...input } = parseWith(RecallRequest, item);
          results.push({ result: (await recall(deps, scope, input, { readonly })).result });
        } catch (err) {
          const mapped = err instanceof DomainError ? mapError(err, deps.config.http.maxBodySize) : null;
          if (mapped === null || mapped.status >= 500) throw err;
          results.push({ error: { status: mapped.status, body: mapped.body as ErrorBody } });
        }
      }
      return { results };
    },
  });
}
