import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  AgingRequest, LearnRequest, RecallQueryString, RecallRequest, SkillsRegisterRequest, SkillsSearchRequest, type RecallResponse,
} from '../../src/contracts/memory.js';
import { PatternKey } from '../../src/contracts/common.js';
import { runAging } from '../../src/services/aging.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { learn } from '../../src/services/learn.js';
import { getMetrics } from '../../src/services/metrics.js';
import { deletePattern, getPattern, getPatternHistory } from '../../src/services/patterns.js';
import { recall, type RecallOutcome } from '../../src/services/recall.js';
import { registerSkills, searchSkills } from '../../src/services/skills.js';
import { authed, requestContext } from '../context.js';
import { parseWith } from '../http.js';
import { acceptAsync, wantsAsync } from '../async.js';

const DeleteParams = z.object({ key: PatternKey });

/** Memory operations (docs/behavior.md "Learn", "Recall", "Aging", "Skills"): learn, recall, metrics, aging, pattern delete, skills. */
export function memoryRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  app.post('/v1/learn', { config: { permission: 'learn' } }, async (request) => {
    const input = parseWith(LearnRequest, request.body);
    return learn(deps, authed(request).scope, input, requestContext(request));
  });

  const sendRecall = (outcome: RecallOutcome, reply: { header(k: string, v: string): unknown }): RecallResponse => {
    // The fallback is a degraded answer; the header lets callers notice without parsing bodies.
    if (outcome.mode === 'keyword') reply.header('x-recall-mode', 'keyword');
    return outcome.result;
  };

  app.post('/v1/recall', { config: { permission: 'recall' } }, async (request, reply) => {
    const { readonly, verify, ...input } = parseWith(RecallRequest, request.body);
    const withVerify = { ...input, verify: verify ?? deps.config.recallVerify.enabled };
    return sendRecall(await recall(deps, authed(request).scope, withVerify, { readonly }), reply);
  });

  app.get('/v1/recall', { config: { permission: 'recall' } }, async (request, reply) => {
    const input = parseWith(RecallQueryString, request.query, 'query');
    return sendRecall(await recall(deps, authed(request).scope, input, { readonly: true }), reply);
  });

  app.get('/v1/metrics', { config: { permission: 'metrics' } }, async (request) => {
    return getMetrics(deps, authed(request).scope);
  });

  app.post('/v1/aging', { config: { permission: 'aging' } }, async (request, reply) => {
    const input = parseWith(AgingRequest, request.body ?? {});
    if (wantsAsync(request)) return acceptAsync(request, reply, deps, 'aging', input);
    return runAging(deps, authed(request).scope, input);
  });

  // The key is `patterns/<id>` URL-encoded as one segment (slash as %2F).
  app.get('/v1/patterns/:key', { config: { permission: 'recall' } }, async (request) => {
    const { key } = parseWith(DeleteParams, request.params, 'path');
    return getPattern(deps, authed(request).scope, key);
  });

  app.get('/v1/patterns/:key/history', { config: { permission: 'recall' } }, async (request) => {
    const { key } = parseWith(DeleteParams, request.params, 'path');
    return getPatternHistory(deps, authed(request).scope, key);
  });

  app.delete('/v1/patterns/:key', { config: { permission: 'patterns:delete' } }, async (request) => {
    const { key } = parseWith(DeleteParams, request.params, 'path');
    return deletePattern(deps, authed(request).scope, key, requestContext(request));
  });

  app.post('/v1/skills/register', { config: { permission: 'skills:register' } }, async (request) => {
    const input = parseWith(SkillsRegisterRequest, request.body);
    return registerSkills(deps, authed(request).scope, input);
  });

  app.post('/v1/skills/search', { config: { permission: 'skills:search' } }, async (request) => {
    const input = parseWith(SkillsSearchRequest, request.body);
    return searchSkills(deps, authed(request).scope, input);
  });
}
