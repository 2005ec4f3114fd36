import type { z } from 'zod';

/**
 * The route table: every HTTP route's method, path and wire schemas, written once. The server
 * registers each entry (server/define-route.ts adds permission, summary and handler), the client
 * calls entries (src/client/api-client.ts `call`), and the console uses that client.
 *
 * The table itself loads nothing: each entry names the contract module its schemas live in and
 * picks them from it. The client loads that one module when it first checks an answer (so the
 * CLI's start-up never loads zod); the server has every module loaded anyway
 * (server/route-schemas.ts).
 *
 * Adding an endpoint: its request and response schemas in the area's contract module
 * (src/contracts/<area>.ts); one entry here (method, path, module, schemas); the service
 * function (src/services/); `defineRoute(app, routes.<name>, { permission, tag, summary,
 * handler })` in server/routes/<area>.ts; storage where it has one (port, JSON and PostgreSQL);
 * a one-line client method over `call` (src/client/); tests; docs/behavior.md. The OpenAPI
 * document, the permission matrix, the client's exported types and the console's calls follow
 * from these; no path is written anywhere else (test/unit/route-paths.test.ts).
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A success answer that is not JSON, by its media type. */
export interface TextResponse {
  text: string;
}

/** What a route takes and answers. Params, query and body are parsed by the server (422 on a mismatch). */
export interface RouteSchemas {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /** The success body, or the media type of a non-JSON one. */
  response: z.ZodType | TextResponse;
}

/** The contract modules an entry may take its schemas from, by name (types only here). */
export interface ContractModules {
  analytics: typeof import('./analytics.js');
  billing: typeof import('./billing.js');
  governance: typeof import('./governance.js');
  health: typeof import('./health.js');
  jobs: typeof import('./jobs.js');
  keys: typeof import('./keys.js');
  llm: typeof import('./llm.js');
  mcp: typeof import('./mcp.js');
  memory: typeof import('./memory.js');
  patterns: typeof import('./patterns.js');
}
export type ContractModuleName = keyof ContractModules;

export interface RouteEntry<S extends RouteSchemas = RouteSchemas> {
  readonly method: HttpMethod;
  /** Fastify's form: `/v1/jobs/:id` (the client fills `:id` in, URL-encoded). */
  readonly path: string;
  /** The contract module `schemas` picks from. */
  readonly module: ContractModuleName;
  /** The schemas of this route out of its contract module. */
  readonly schemas: (module: never) => S;
}

/** An entry: method, path, the contract module and the schemas picked out of it. */
function route<M extends ContractModuleName, S extends RouteSchemas>(method: HttpMethod, path: string, module: M, schemas: (m: ContractModules[M]) => S): RouteEntry<S> {
  return { method, path, module, schemas: schemas as (module: never) => S };
}

const text = (type: string) => (): { response: TextResponse } => ({ response: { text: type } });

export const routes = {
  // Memory: learn, recall, metrics, aging, patterns, skills (docs/behavior.md "Learn", "Recall", "Aging", "Skills").
  learn: route('POST', '/v1/learn', 'memory', (m) => ({ body: m.LearnRequest, response: m.LearnResponse })),
  recall: route('POST', '/v1/recall', 'memory', (m) => ({ body: m.RecallRequest, response: m.RecallResponse })),
  recallGet: route('GET', '/v1/recall', 'memory', (m) => ({ query: m.RecallQueryString, response: m.RecallResponse })),
  recallBatch: route('POST', '/v1/recall/batch', 'memory', (m) => ({ body: m.RecallBatchRequest, response: m.RecallBatchResponse })),
  metrics: route('GET', '/v1/metrics', 'memory', (m) => ({ response: m.MetricsResponse })),
  aging: route('POST', '/v1/aging', 'memory', (m) => ({ body: m.AgingRequest, response: m.AgingResponse })),
  listPatterns: route('GET', '/v1/patterns', 'patterns', (m) => ({ query: m.PatternListQuery, response: m.PatternListResponse })),
  exportPatterns: route('GET', '/v1/patterns/export', 'patterns', (m) => ({ query: m.PatternExportQuery, response: { text: 'application/x-ndjson' } })),
  getPattern: route('GET', '/v1/patterns/:key', 'memory', (m) => ({ params: m.PatternKeyParams, response: m.ExportRecord })),
  patternHistory: route('GET', '/v1/patterns/:key/history', 'memory', (m) => ({ params: m.PatternKeyParams, response: m.PatternHistoryResponse })),
  patternOutcomes: route('GET', '/v1/patterns/:key/outcomes', 'memory', (m) => ({ params: m.PatternKeyParams, query: m.PatternOutcomesQuery, response: m.PatternOutcomesResponse })),
  // (+) Outcomes of reusing a recall's matches (docs/behavior.md "Outcomes").
  reportOutcome: route('POST', '/v1/outcomes', 'memory', (m) => ({ body: m.OutcomeRequest, response: m.OutcomeResponse })),
  deletePattern: route('DELETE', '/v1/patterns/:key', 'memory', (m) => ({ params: m.PatternKeyParams, response: m.DeletePatternResponse })),
  skillsRegister: route('POST', '/v1/skills/register', 'memory', (m) => ({ body: m.SkillsRegisterRequest, response: m.SkillsRegisterResponse })),
  skillsSearch: route('POST', '/v1/skills/search', 'memory', (m) => ({ body: m.SkillsSearchRequest, response: m.SkillsSearchResponse })),

  // Import and export (the JSON forms; the NDJSON export is governance's).
  exportAll: route('GET', '/v1/export', 'memory', (m) => ({ response: m.ExportResponse })),
  importRecords: route('POST', '/v1/import', 'memory', (m) => ({ body: m.ImportRequest, response: m.ImportResponse })),

  // Health and the service's own documents.
  version: route('GET', '/v1/version', 'health', (m) => ({ response: m.VersionResponse })),
  health: route('GET', '/v1/health', 'health', (m) => ({ response: m.HealthResponse })),
  healthDeep: route('GET', '/v1/health/deep', 'health', (m) => ({ response: m.DeepHealthResponse })),
  // (+) Probes for orchestrators, outside /v1 like /metrics (docs/behavior.md "Health and maintenance").
  liveness: route('GET', '/livez', 'health', (m) => ({ response: m.LivenessResponse })),
  readiness: route('GET', '/readyz', 'health', (m) => ({ response: m.ReadinessResponse })),
  openApi: route('GET', '/v1/openapi.json', 'health', (m) => ({ response: m.OpenApiDocumentResponse })),
  prometheusMetrics: route('GET', '/metrics', 'health', text('text/plain; version=0.0.4')),
  consolePage: route('GET', '/console', 'health', text('text/html')),
  consoleAsset: route('GET', '/console/assets/:file', 'health', (m) => ({ params: m.ConsoleAssetParams, response: { text: 'text/javascript' } })),

  // Jobs (docs/behavior.md "Jobs").
  listJobs: route('GET', '/v1/jobs', 'jobs', (m) => ({ query: m.JobListQuery, response: m.JobListResponse })),
  getJob: route('GET', '/v1/jobs/:id', 'jobs', (m) => ({ params: m.JobParams, response: m.JobRecord })),
  cancelJob: route('POST', '/v1/jobs/:id/cancel', 'jobs', (m) => ({ params: m.JobParams, response: m.JobRecord })),

  // API keys (docs/behavior.md "Keys").
  bootstrapKey: route('POST', '/v1/keys/bootstrap', 'keys', (m) => ({ body: m.BootstrapRequest, response: m.BootstrapResponse })),
  createKey: route('POST', '/v1/keys', 'keys', (m) => ({ body: m.CreateKeyRequest, response: m.IssuedKey })),
  listKeys: route('GET', '/v1/keys', 'keys', (m) => ({ query: m.KeyListQuery, response: m.KeyListResponse })),
  revokeKey: route('DELETE', '/v1/keys/:id', 'keys', (m) => ({ params: m.KeyParams, response: m.KeyInfo })),
  rotateKey: route('POST', '/v1/keys/:id/rotate', 'keys', (m) => ({ params: m.KeyParams, response: m.IssuedKey })),
  access: route('GET', '/v1/access', 'keys', (m) => ({ response: m.AccessResponse })),

  // LLM features and the feedback store (docs/behavior.md "Evaluate", "Compose", "Evolve").
  evaluate: route('POST', '/v1/evaluate', 'llm', (m) => ({ body: m.EvaluateRequest, response: m.EvaluateResponse })),
  compose: route('POST', '/v1/compose', 'llm', (m) => ({ body: m.ComposeRequest, response: m.ComposeResponse })),
  evolve: route('POST', '/v1/evolve', 'llm', (m) => ({ body: m.EvolveRequest, response: m.EvolveResponse })),
  analyzeFailures: route('POST', '/v1/analyze-failures', 'llm', (m) => ({ body: m.AnalyzeFailuresRequest, response: m.AnalyzeFailuresResponse })),
  feedback: route('GET', '/v1/feedback', 'llm', (m) => ({ query: m.FeedbackQuery, response: m.FeedbackResponse })),
  feedbackDecay: route('POST', '/v1/feedback/decay', 'llm', (m) => ({ body: m.FeedbackDecayRequest, response: m.FeedbackDecayResponse })),

  // Analytics (docs/behavior.md "Analytics").
  computeRollup: route('POST', '/v1/analytics/rollup', 'analytics', (m) => ({ body: m.RollupRequest, response: m.RollupResponse })),
  getRollup: route('GET', '/v1/analytics/rollup/:window', 'analytics', (m) => ({ params: m.RollupParams, response: m.RollupResponse })),
  events: route('GET', '/v1/analytics/events', 'analytics', (m) => ({ query: m.EventsQuery, response: m.EventsResponse })),

  // Governance (docs/behavior.md "Governance").
  getRetention: route('GET', '/v1/governance/retention', 'governance', (m) => ({ response: m.RetentionPolicyResponse })),
  setRetention: route('PUT', '/v1/governance/retention', 'governance', (m) => ({ body: m.RetentionUpdateRequest, response: m.RetentionPolicyResponse })),
  applyRetention: route('POST', '/v1/governance/retention/apply', 'governance', (m) => ({ body: m.RetentionApplyRequest, response: m.RetentionApplyResponse })),
  governanceExport: route('GET', '/v1/governance/export', 'governance', (m) => ({ query: m.NdjsonExportQuery, response: { text: 'application/x-ndjson' } })),
  classify: route('PUT', '/v1/governance/patterns/:key/classify', 'governance', (m) => ({ params: m.ClassifyParams, body: m.ClassifyRequest, response: m.ClassifyResponse })),
  deleteProject: route('DELETE', '/v1/governance/projects/:project_id', 'governance', (m) => ({
    params: m.DeleteProjectParams, query: m.DeletionQuery, response: m.DeletionResultResponse,
  })),
  deleteTenant: route('DELETE', '/v1/governance/tenants/:tenant_id', 'governance', (m) => ({
    params: m.DeleteTenantParams, query: m.DeletionQuery, response: m.DeletionResultResponse,
  })),
  deleteScope: route('POST', '/v1/governance/delete-scope', 'governance', (m) => ({
    query: m.DeleteScopeQuery, body: m.DeleteScopeBody, response: m.DeletionResultResponse,
  })),

  // Billing (docs/behavior.md "Billing").
  billingStatus: route('GET', '/v1/billing/status', 'billing', (m) => ({ response: m.BillingStatusResponse })),
  checkout: route('POST', '/v1/billing/checkout', 'billing', (m) => ({ body: m.CheckoutRequest, response: m.CheckoutResponse })),
  portal: route('GET', '/v1/billing/portal', 'billing', (m) => ({ query: m.PortalQuery, response: m.PortalResponse })),
  setOverage: route('PATCH', '/v1/billing/overage', 'billing', (m) => ({ body: m.OverageRequest, response: m.OverageResponse })),
  // The Model Context Protocol endpoint (only with SERVICE_MCP=true).
  mcp: route('POST', '/mcp', 'mcp', (m) => ({ body: m.McpMessage, response: m.McpMessage })),

  paymentWebhook: route('POST', '/v1/billing/webhook', 'billing', (m) => ({ body: m.WebhookEvent, response: m.WebhookResponse })),
} as const;

export type Routes = typeof routes;
export type RouteName = keyof Routes;

/** The schemas of an entry, given its contract module loaded. */
export type SchemasOf<E> = E extends RouteEntry<infer S> ? S : never;

type Declared<E, K extends 'params' | 'query' | 'body'> = SchemasOf<E> extends { [k in K]: infer T extends z.ZodType } ? T : never;

/** A query value as a client sends it: numbers and booleans are written as text on the wire. */
type QueryField<V> = unknown extends V ? number | string
  : V extends 'true' | 'false' | '1' | '0' ? V | boolean
  : V;
export type ClientQuery<T> = { [K in keyof T]?: QueryField<T[K]> };

/** What a caller passes for an entry: the declared params, query and body (a body with only optional fields may be left out). */
export type CallInput<E> =
  ([Declared<E, 'params'>] extends [never] ? unknown : { params: z.input<Declared<E, 'params'>> }) &
  ([Declared<E, 'query'>] extends [never] ? unknown : { query?: ClientQuery<z.input<Declared<E, 'query'>>> }) &
  ([Declared<E, 'body'>] extends [never] ? unknown
    : object extends z.input<Declared<E, 'body'>> ? { body?: z.input<Declared<E, 'body'>> } : { body: z.input<Declared<E, 'body'>> });

/** The parsed success answer of an entry. */
export type CallOutput<E> = SchemasOf<E>['response'] extends infer R extends z.ZodType ? z.output<R> : never;

/** The entry's path with its `:name` parameters filled in, each URL-encoded as one segment. */
export function pathOf(entry: RouteEntry, params?: Record<string, unknown>): string {
  return entry.path.replace(/:([A-Za-z_]+)/g, (_all, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null) throw new Error(`${entry.method} ${entry.path} needs the path parameter "${name}"`);
    return encodeURIComponent(String(value));
  });
}
