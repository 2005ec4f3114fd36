import type {
  AnalyzeFailuresRequest, AnalyzeFailuresResponse, ComposeRequest, ComposeResponse, EvaluateRequest, EvaluateResponse,
  EvolveRequest, EvolveResponse, FeedbackDecayResponse, FeedbackListQuery, FeedbackResponse,
} from '../contracts/llm.js';
import { routes } from '../contracts/routes.js';
import type { ApiClient } from './api-client.js';

/**
 * Typed calls of the LLM endpoints (evaluate, compose, evolve) and the feedback store, over
 * the route table (ApiClient.call); answers are validated with the server's own contracts.
 */
export class LlmClient {
  constructor(private readonly client: ApiClient) {}

  evaluate(body: EvaluateRequest): Promise<EvaluateResponse> {
    return this.client.call(routes.evaluate, { body });
  }

  compose(body: ComposeRequest): Promise<ComposeResponse> {
    return this.client.call(routes.compose, { body });
  }

  evolve(body: EvolveRequest): Promise<EvolveResponse> {
    return this.client.call(routes.evolve, { body });
  }

  analyzeFailures(body: AnalyzeFailuresRequest = {}): Promise<AnalyzeFailuresResponse> {
    return this.client.call(routes.analyzeFailures, { body });
  }

  /** Recurring issues, filtered by task type, paged. */
  feedback(query: FeedbackListQuery = {}): Promise<FeedbackResponse> {
    return this.client.call(routes.feedback, { query });
  }

  decayFeedback(): Promise<FeedbackDecayResponse> {
    return this.client.call(routes.feedbackDecay, { body: {} });
  }
}
