import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  AnalyzeFailuresRequest, ComposeRequest, EvaluateRequest, EvolveRequest, FeedbackQuery,
} from '../../src/contracts/llm.js';
import { analyzeFailures } from '../../src/services/analyze-failures.js';
import { compose } from '../../src/services/compose.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { evaluate } from '../../src/services/evaluate.js';
import { evolve } from '../../src/services/evolve.js';
import { decayFeedback, listFeedback } from '../../src/services/feedback.js';
import { authed } from '../context.js';
import { parseWith } from '../http.js';
import { acceptAsync, wantsAsync } from '../async.js';

const EmptyBody = z.object({}).strict().optional();

/**
 * LLM features (docs/behavior.md "Evaluate", "Compose", "Evolve"): evaluate, compose, evolve (the expensive rate class), plus the
 * feedback store they feed and analyze-failures, which needs only the embedder.
 */
export function llmRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  app.post('/v1/evaluate', { config: { permission: 'evaluate', rateClass: 'expensive' } }, async (request, reply) => {
    const input = parseWith(EvaluateRequest, request.body);
    if (wantsAsync(request)) return acceptAsync(request, reply, deps, 'evaluate', input);
    return evaluate(deps, authed(request).scope, input);
  });

  app.post('/v1/compose', { config: { permission: 'compose', rateClass: 'expensive' } }, async (request, reply) => {
    const input = parseWith(ComposeRequest, request.body);
    if (wantsAsync(request)) return acceptAsync(request, reply, deps, 'compose', input);
    return compose(deps, authed(request).scope, input);
  });

  app.post('/v1/evolve', { config: { permission: 'evolve', rateClass: 'expensive' } }, async (request, reply) => {
    const input = parseWith(EvolveRequest, request.body);
    if (wantsAsync(request)) return acceptAsync(request, reply, deps, 'evolve', input);
    return evolve(deps, authed(request).scope, input);
  });

  app.post('/v1/analyze-failures', { config: { permission: 'analyze-failures' } }, async (request) => {
    // The body is optional: no body means every default.
    const input = parseWith(AnalyzeFailuresRequest, request.body ?? {});
    return analyzeFailures(deps, authed(request).scope, input);
  });

  app.get('/v1/feedback', { config: { permission: 'feedback:read' } }, async (request) => {
    const input = parseWith(FeedbackQuery, request.query, 'query');
    return listFeedback(deps, authed(request).scope, input);
  });

  app.post('/v1/feedback/decay', { config: { permission: 'feedback:decay' } }, async (request, reply) => {
    parseWith(EmptyBody, request.body);
    if (wantsAsync(request)) return acceptAsync(request, reply, deps, 'feedback_decay', null);
    return decayFeedback(deps, authed(request).scope);
  });
}
