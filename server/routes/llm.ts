import type { FastifyInstance } from 'fastify';
import { analyzeFailures } from '../../src/services/analyze-failures.js';
import { compose } from '../../src/services/compose.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { evaluate } from '../../src/services/evaluate.js';
import { evolve } from '../../src/services/evolve.js';
import { decayFeedback, listFeedback } from '../../src/services/feedback.js';
import { authed } from '../context.js';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';
import { acceptAsync, runOrQueue, wantsAsync } from '../async.js';

/**
 * LLM features (docs/behavior.md "Evaluate", "Compose", "Evolve"): evaluate, compose, evolve (the expensive rate class), plus the
 * feedback store they feed and analyze-failures, which needs only the embedder.
 */
export function llmRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  defineRoute(app, routes.evaluate, {
    permission: 'evaluate', rateClass: 'expensive', async: true, errors: [501, 503],
    tag: 'llm', summary: 'Score agent code with several independent LLM evaluators.',
    handler: runOrQueue(deps, 'evaluate', evaluate),
  });

  defineRoute(app, routes.compose, {
    permission: 'compose', rateClass: 'expensive', async: true, errors: [501, 502, 503],
    tag: 'llm', summary: 'Split a task into a pipeline of stages backed by stored patterns (experimental).',
    handler: runOrQueue(deps, 'compose', compose),
  });

  defineRoute(app, routes.evolve, {
    permission: 'evolve', rateClass: 'expensive', async: true, errors: [501, 502, 503],
    tag: 'llm', summary: 'Propose and check an improved prompt from recurring feedback (experimental).',
    handler: runOrQueue(deps, 'evolve', evolve),
  });

  // The body is optional: no body means every default.
  defineRoute(app, routes.analyzeFailures, {
    permission: 'analyze-failures', bodyOptional: true,
    tag: 'llm', summary: 'Cluster recurring feedback by meaning (no LLM).',
    handler: ({ body }, request) => analyzeFailures(deps, authed(request).scope, body),
  });

  defineRoute(app, routes.feedback, {
    permission: 'feedback:read', tag: 'llm', summary: 'Top recurring quality issues.',
    handler: ({ query }, request) => listFeedback(deps, authed(request).scope, query),
  });

  defineRoute(app, routes.feedbackDecay, {
    permission: 'feedback:decay', bodyOptional: true, async: true,
    tag: 'llm', summary: 'Decay feedback clusters by age and prune faded ones.',
    handler: (_input, request, reply) => {
      if (wantsAsync(request)) return acceptAsync(request, reply, deps, 'feedback_decay', null);
      return decayFeedback(deps, authed(request).scope);
    },
  });
}
