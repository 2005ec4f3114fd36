import type { FastifyInstance } from 'fastify';
import type { RecallResponse } from '../../src/contracts/memory.js';
import { runAging } from '../../src/services/aging.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { learn } from '../../src/services/learn.js';
import { getMetrics } from '../../src/services/metrics.js';
import { deletePattern, getPattern, getPatternHistory, listPatterns } from '../../src/services/patterns.js';
import { exportListing } from '../../src/services/pattern-export.js';
import { listPatternOutcomes, reportOutcome } from '../../src/services/outcomes.js';
import { recall, type RecallOutcome } from '../../src/services/recall.js';
import { registerSkills, searchSkills } from '../../src/services/skills.js';
import { authed, requestContext } from '../context.js';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';
import { runOrQueue } from '../async.js';
import { sendNdjsonExport } from '../ndjson-export.js';

/** Memory operations (docs/behavior.md "Learn", "Recall", "Aging", "Skills"): learn, recall, metrics, aging, pattern delete, skills. */
export function memoryRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  defineRoute(app, routes.learn, {
    permission: 'learn', errors: [503],
    tag: 'memory', summary: 'Store a successful run as a pattern (or improve a near-identical one).',
    handler: ({ body }, request) => learn(deps, authed(request).scope, body, requestContext(request)),
  });

  const sendRecall = (outcome: RecallOutcome, reply: { header(k: string, v: string): unknown }): RecallResponse => {
    // The fallback is a degraded answer; the header lets callers notice without parsing bodies.
    if (outcome.mode === 'keyword') reply.header('x-recall-mode', 'keyword');
    return outcome.result;
  };

  defineRoute(app, routes.recall, {
    permission: 'recall', tag: 'memory', summary: 'Find stored patterns similar to a task; returned reusable matches count as reuse unless `readonly`.',
    handler: async ({ body: { readonly, ...input } }, request, reply) => {
      return sendRecall(await recall(deps, authed(request).scope, input, { readonly }), reply);
    },
  });

  defineRoute(app, routes.recallGet, {
    permission: 'recall', tag: 'memory', summary: 'Read-only recall with the query in the query string.',
    // The GET form never verifies (no LLM call from a cacheable read).
    handler: async ({ query }, request, reply) => sendRecall(await recall(deps, authed(request).scope, { ...query, verify: false }, { readonly: true }), reply),
  });

  defineRoute(app, routes.metrics, {
    permission: 'metrics', tag: 'memory', summary: 'Runs, success rate, average eval score, pattern count and reuse rate of the scope.',
    handler: (_input, request) => getMetrics(deps, authed(request).scope),
  });

  defineRoute(app, routes.aging, {
    permission: 'aging', bodyOptional: true, async: true,
    tag: 'memory', summary: 'Decay success scores by age and prune patterns below 0.1.',
    handler: runOrQueue(deps, 'aging', runAging),
  });

  defineRoute(app, routes.listPatterns, {
    permission: 'recall', tag: 'memory', summary: '(+) A page of the stored patterns, newest `updated_at` first, with filters; `next_cursor` continues.',
    handler: ({ query }, request) => {
      const { principal, scope } = authed(request);
      return listPatterns(deps, scope, principal.role, query);
    },
  });

  defineRoute(app, routes.exportPatterns, {
    permission: 'recall', tag: 'memory', summary: '(+) Every pattern the listing with these filters shows the caller, as NDJSON export records, in one stream.',
    handler: ({ query }, request, reply) => {
      const { principal, scope } = authed(request);
      return sendNdjsonExport(deps, reply, scope, exportListing(deps, scope, principal.role, query, requestContext(request)));
    },
  });

  // The key is `patterns/<id>` URL-encoded as one segment (slash as %2F).
  defineRoute(app, routes.getPattern, {
    permission: 'recall', errors: [404],
    tag: 'memory', summary: 'One stored pattern with all its fields (the export record).',
    handler: ({ params }, request) => getPattern(deps, authed(request).scope, authed(request).principal.role, params.key),
  });

  defineRoute(app, routes.patternHistory, {
    permission: 'recall', errors: [404],
    tag: 'memory', summary: '(+) A pattern\'s skill tags and its last 20 eval observations, newest first.',
    handler: ({ params }, request) => getPatternHistory(deps, authed(request).scope, authed(request).principal.role, params.key),
  });

  defineRoute(app, routes.patternOutcomes, {
    permission: 'recall', errors: [404],
    tag: 'memory', summary: '(+) A pattern\'s reported outcomes (how reusing it went), newest first, with the queries it was recalled for.',
    handler: ({ params, query }, request) =>
      listPatternOutcomes(deps, authed(request).scope, authed(request).principal.role, params.key, query.limit),
  });

  defineRoute(app, routes.reportOutcome, {
    permission: 'learn', errors: [404],
    tag: 'memory', summary: '(+) Report how reusing one match of a recall went; the same recall and pattern again replaces the report.',
    handler: ({ body }, request) => reportOutcome(deps, authed(request).scope, body),
  });

  defineRoute(app, routes.deletePattern, {
    permission: 'patterns:delete', errors: [404],
    tag: 'memory', summary: 'Delete one pattern for good (key URL-encoded, slash as %2F).',
    handler: ({ params }, request) => deletePattern(deps, authed(request).scope, params.key, requestContext(request)),
  });

  defineRoute(app, routes.skillsRegister, {
    permission: 'skills:register', errors: [404],
    tag: 'memory', summary: 'Replace the skill tags of a pattern.',
    handler: ({ body }, request) => registerSkills(deps, authed(request).scope, body),
  });

  defineRoute(app, routes.skillsSearch, {
    permission: 'skills:search', tag: 'memory', summary: 'Patterns carrying any (or all) of the given tags.',
    handler: ({ body }, request) => searchSkills(deps, authed(request).scope, body),
  });
}
