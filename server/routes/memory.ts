import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  AgingRequest, AgingResponse, DeletePatternResponse, ExportRecord, PatternHistoryResponse, LearnRequest, LearnResponse, MetricsResponse, RecallQueryString,
  RecallRequest, RecallResponse, SkillsRegisterRequest, SkillsRegisterResponse, SkillsSearchRequest, SkillsSearchResponse,
} from '../../src/contracts/memory.js';
import { PatternKey } from '../../src/contracts/common.js';
import { PatternExportQuery, PatternListQuery, PatternListResponse } from '../../src/contracts/patterns.js';
import { runAging } from '../../src/services/aging.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { learn } from '../../src/services/learn.js';
import { getMetrics } from '../../src/services/metrics.js';
import { deletePattern, getPattern, getPatternHistory, listPatterns } from '../../src/services/patterns.js';
import { exportListing } from '../../src/services/pattern-export.js';
import { recall, type RecallOutcome } from '../../src/services/recall.js';
import { registerSkills, searchSkills } from '../../src/services/skills.js';
import { authed, requestContext } from '../context.js';
import { defineRoute } from '../define-route.js';
import { runOrQueue } from '../async.js';
import { sendNdjsonExport } from '../ndjson-export.js';

const KeyPath = z.object({ key: PatternKey });

/** Memory operations (docs/behavior.md "Learn", "Recall", "Aging", "Skills"): learn, recall, metrics, aging, pattern delete, skills. */
export function memoryRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  defineRoute(app, {
    method: 'POST', url: '/v1/learn', permission: 'learn', body: LearnRequest, response: LearnResponse, errors: [503],
    tag: 'memory', summary: 'Store a successful run as a pattern (or improve a near-identical one).',
    handler: ({ body }, request) => learn(deps, authed(request).scope, body, requestContext(request)),
  });

  const sendRecall = (outcome: RecallOutcome, reply: { header(k: string, v: string): unknown }): RecallResponse => {
    // The fallback is a degraded answer; the header lets callers notice without parsing bodies.
    if (outcome.mode === 'keyword') reply.header('x-recall-mode', 'keyword');
    return outcome.result;
  };

  defineRoute(app, {
    method: 'POST', url: '/v1/recall', permission: 'recall', body: RecallRequest, response: RecallResponse,
    tag: 'memory', summary: 'Find stored patterns similar to a task; returned reusable matches count as reuse unless `readonly`.',
    handler: async ({ body: { readonly, ...input } }, request, reply) => {
      return sendRecall(await recall(deps, authed(request).scope, input, { readonly }), reply);
    },
  });

  defineRoute(app, {
    method: 'GET', url: '/v1/recall', permission: 'recall', query: RecallQueryString, response: RecallResponse,
    tag: 'memory', summary: 'Read-only recall with the query in the query string.',
    // The GET form never verifies (no LLM call from a cacheable read).
    handler: async ({ query }, request, reply) => sendRecall(await recall(deps, authed(request).scope, { ...query, verify: false }, { readonly: true }), reply),
  });

  defineRoute(app, {
    method: 'GET', url: '/v1/metrics', permission: 'metrics', response: MetricsResponse,
    tag: 'memory', summary: 'Runs, success rate, average eval score, pattern count and reuse rate of the scope.',
    handler: (_input, request) => getMetrics(deps, authed(request).scope),
  });

  defineRoute(app, {
    method: 'POST', url: '/v1/aging', permission: 'aging', body: AgingRequest, bodyOptional: true, response: AgingResponse, async: true,
    tag: 'memory', summary: 'Decay success scores by age and prune patterns below 0.1.',
    handler: runOrQueue(deps, 'aging', runAging),
  });

  defineRoute(app, {
    method: 'GET', url: '/v1/patterns', permission: 'recall', query: PatternListQuery, response: PatternListResponse,
    tag: 'memory', summary: '(+) A page of the stored patterns, newest `updated_at` first, with filters; `next_cursor` continues.',
    handler: ({ query }, request) => {
      const { principal, scope } = authed(request);
      return listPatterns(deps, scope, principal.role, query);
    },
  });

  // Declared before `/v1/patterns/:key`, though a static segment wins over a parameter anyway.
  defineRoute(app, {
    method: 'GET', url: '/v1/patterns/export', permission: 'recall', query: PatternExportQuery, response: { text: 'application/x-ndjson' },
    tag: 'memory', summary: '(+) Every pattern the listing with these filters shows the caller, as NDJSON export records, in one stream.',
    handler: ({ query }, request, reply) => {
      const { principal, scope } = authed(request);
      return sendNdjsonExport(deps, reply, scope, exportListing(deps, scope, principal.role, query, requestContext(request)));
    },
  });

  // The key is `patterns/<id>` URL-encoded as one segment (slash as %2F).
  defineRoute(app, {
    method: 'GET', url: '/v1/patterns/:key', permission: 'recall', params: KeyPath, response: ExportRecord, errors: [404],
    tag: 'memory', summary: 'One stored pattern with all its fields (the export record).',
    handler: ({ params }, request) => getPattern(deps, authed(request).scope, authed(request).principal.role, params.key),
  });

  defineRoute(app, {
    method: 'GET', url: '/v1/patterns/:key/history', permission: 'recall', params: KeyPath, response: PatternHistoryResponse, errors: [404],
    tag: 'memory', summary: '(+) A pattern\'s skill tags and its last 20 eval observations, newest first.',
    handler: ({ params }, request) => getPatternHistory(deps, authed(request).scope, authed(request).principal.role, params.key),
  });

  defineRoute(app, {
    method: 'DELETE', url: '/v1/patterns/:key', permission: 'patterns:delete', params: KeyPath, response: DeletePatternResponse, errors: [404],
    tag: 'memory', summary: 'Delete one pattern for good (key URL-encoded, slash as %2F).',
    handler: ({ params }, request) => deletePattern(deps, authed(request).scope, params.key, requestContext(request)),
  });

  defineRoute(app, {
    method: 'POST', url: '/v1/skills/register', permission: 'skills:register', body: SkillsRegisterRequest, response: SkillsRegisterResponse, errors: [404],
    tag: 'memory', summary: 'Replace the skill tags of a pattern.',
    handler: ({ body }, request) => registerSkills(deps, authed(request).scope, body),
  });

  defineRoute(app, {
    method: 'POST', url: '/v1/skills/search', permission: 'skills:search', body: SkillsSearchRequest, response: SkillsSearchResponse,
    tag: 'memory', summary: 'Patterns carrying any (or all) of the given tags.',
    handler: ({ body }, request) => searchSkills(deps, authed(request).scope, body),
  });
}
