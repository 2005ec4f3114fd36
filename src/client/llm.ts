import type {
  AnalyzeFailuresRequest, AnalyzeFailuresResponse, ComposeRequest, ComposeResponse, EvaluateRequest, EvaluateResponse,
  EvolveRequest, EvolveResponse, FeedbackDecayResponse, FeedbackResponse,
} from '../contracts/llm.js';
import type { ServiceClient } from './service-client.js';

// Contracts (and zod) load when an LLM answer is first checked, not with the client:
// `service recall` imports the client and must stay free of zod (commands/registry.ts).
const contracts = () => import('../contracts/llm.js');

/** GET /v1/feedback query: recurring issues filtered by task type, paged. */
export interface FeedbackListQuery {
  task_type?: string;
  limit?: number;
  offset?: number;
}

/**
 * Typed calls of the LLM endpoints (evaluate, compose, evolve) and the feedback store, on
 * top of ServiceClient.request(); answers are validated with the server's own contracts.
 */
export class LlmClient {
  constructor(private readonly client: ServiceClient) {}

  evaluate(body: EvaluateRequest): Promise<EvaluateResponse> {
    return this.client.request('POST', '/v1/evaluate', { body, schema: async () => (await contracts()).EvaluateResponse });
  }

  compose(body: ComposeRequest): Promise<ComposeResponse> {
    return this.client.request('POST', '/v1/compose', { body, schema: async () => (await contracts()).ComposeResponse });
  }

  evolve(body: EvolveRequest): Promise<EvolveResponse> {
    return this.client.request('POST', '/v1/evolve', { body, schema: async () => (await contracts()).EvolveResponse });
  }

  analyzeFailures(body: AnalyzeFailuresRequest = {}): Promise<AnalyzeFailuresResponse> {
    return this.client.request('POST', '/v1/analyze-failures', { body, schema: async () => (await contracts()).AnalyzeFailuresResponse });
  }

  feedback(query: FeedbackListQuery = {}): Promise<FeedbackResponse> {
    return this.client.request('GET', '/v1/feedback', { query: { ...query }, schema: async () => (await contracts()).FeedbackResponse });
  }

  decayFeedback(): Promise<FeedbackDecayResponse> {
    return this.client.request('POST', '/v1/feedback/decay', { schema: async () => (await contracts()).FeedbackDecayResponse });
  }
}

export type {
  AnalyzeFailuresRequest, AnalyzeFailuresResponse, ComposeRequest, ComposeResponse, EvaluateRequest, EvaluateResponse,
  EvolveRequest, EvolveResponse, FeedbackResponse, FeedbackDecayResponse,
} from '../contracts/llm.js';
