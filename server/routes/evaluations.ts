import type { FastifyInstance } from 'fastify';
import type { ServiceDeps } from '../../src/services/deps.js';
import { JUDGE_SETTINGS } from '../../src/services/evaluate.js';
import { blessRun, compareRuns, createRun, finishRun, getRun, listRuns } from '../../src/services/evaluation-runs.js';
import { authed } from '../context.js';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';

/** (+) docs/behavior.md "Evaluation runs": runs of evaluated cases, their comparison and baselines. */
export function evaluationRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  defineRoute(app, routes.listEvaluations, {
    permission: 'evaluations:read', tag: 'evaluations', summary: 'The scope\'s evaluation runs, newest first (keyset paging; filters label, branch, status).',
    handler: ({ query }, request) => listRuns(deps, authed(request).scope, query),
  });

  defineRoute(app, routes.createEvaluation, {
    permission: 'evaluate', bodyOptional: true, tag: 'evaluations', summary: 'Start a run; evaluations with its run_id become its cases.',
    handler: ({ body }, request) => createRun(deps, authed(request).scope, body, JUDGE_SETTINGS),
  });

  defineRoute(app, routes.getEvaluation, {
    permission: 'evaluations:read', errors: [404],
    tag: 'evaluations', summary: 'One run with its cases (task, code, output, each evaluator\'s score and feedback).',
    handler: ({ params }, request) => getRun(deps, authed(request).scope, params.id),
  });

  defineRoute(app, routes.finishEvaluation, {
    permission: 'evaluate', bodyOptional: true, errors: [404, 409],
    tag: 'evaluations', summary: 'Finish a run: summary, comparison with a baseline, status, optional blessing.',
    handler: ({ params, body }, request) => finishRun(deps, authed(request).scope, params.id, body),
  });

  defineRoute(app, routes.blessEvaluation, {
    permission: 'evaluate', errors: [404, 409],
    tag: 'evaluations', summary: 'Make a passed run the baseline of its label.',
    handler: ({ params }, request) => blessRun(deps, authed(request).scope, params.id),
  });

  defineRoute(app, routes.compareEvaluations, {
    permission: 'evaluations:read', errors: [404],
    tag: 'evaluations', summary: 'Compare a run with a baseline (run id or label) case by case, regressions first.',
    handler: ({ params, query }, request) => compareRuns(deps, authed(request).scope, params.id, params.baseline, query.regression_delta),
  });
}
