import type {
  CompareResponse, CreateRunRequest, EvaluationRun, FinishRunRequest, FinishRunResponse, RunDetailResponse, RunListQuery, RunListResponse,
} from '../contracts/evaluations.js';
import { routes } from '../contracts/routes.js';
import type { ApiClient } from './api-client.js';

/** (+) Evaluation runs: start, finish, bless, list, read and compare (docs/behavior.md "Evaluation runs"). */
export class EvaluationsClient {
  constructor(private readonly client: ApiClient) {}

  create(body: CreateRunRequest = {}): Promise<EvaluationRun> {
    return this.client.call(routes.createEvaluation, { body });
  }

  finish(id: string, body: FinishRunRequest = {}): Promise<FinishRunResponse> {
    return this.client.call(routes.finishEvaluation, { params: { id }, body });
  }

  bless(id: string): Promise<EvaluationRun> {
    return this.client.call(routes.blessEvaluation, { params: { id } });
  }

  list(query: RunListQuery = {}): Promise<RunListResponse> {
    return this.client.call(routes.listEvaluations, { query });
  }

  get(id: string): Promise<RunDetailResponse> {
    return this.client.call(routes.getEvaluation, { params: { id } });
  }

  /** `baseline`: a run id, or a label (its blessed run). */
  compare(id: string, baseline: string, regressionDelta?: number): Promise<CompareResponse> {
    return this.client.call(routes.compareEvaluations, { params: { id, baseline }, query: regressionDelta === undefined ? {} : { regression_delta: regressionDelta } });
  }
}
