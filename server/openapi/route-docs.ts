import { z, type ZodType } from 'zod';
import { RollupParams, RollupRequest, RollupResponse, EventsQuery, EventsResponse } from '../../src/contracts/analytics.js';
import {
  BillingStatusResponse, CheckoutRequest, CheckoutResponse, OverageRequest, OverageResponse, PortalQuery, PortalResponse, WebhookResponse,
} from '../../src/contracts/billing.js';
import { PatternKey } from '../../src/contracts/common.js';
import {
  ClassifyParams, ClassifyRequest, ClassifyResponse, DeleteProjectParams, DeleteScopeQuery, DeleteTenantParams, DeletionResultResponse,
  NdjsonExportQuery, RetentionApplyRequest, RetentionApplyResponse, RetentionPolicyResponse, RetentionUpdateRequest,
} from '../../src/contracts/governance.js';
import { DeepHealthResponse, HealthResponse, VersionResponse } from '../../src/contracts/health.js';
import { JobListQuery, JobListResponse, JobParams, JobRecord } from '../../src/contracts/jobs.js';
import { BootstrapRequest, BootstrapResponse, CreateKeyRequest, IssuedKey, KeyInfo, KeyListResponse, KeyParams } from '../../src/contracts/keys.js';
import {
  AnalyzeFailuresRequest, AnalyzeFailuresResponse, ComposeRequest, ComposeResponse, EvaluateRequest, EvaluateResponse,
  EvolveRequest, EvolveResponse, FeedbackDecayResponse, FeedbackQuery, FeedbackResponse,
} from '../../src/contracts/llm.js';
import {
  AgingRequest, AgingResponse, DeletePatternResponse, PatternHistoryResponse, ExportRecord, ExportResponse, ImportRequest, ImportResponse, LearnRequest, LearnResponse,
  MetricsResponse, RecallQueryString, RecallRequest, RecallResponse, SkillsRegisterRequest, SkillsRegisterResponse,
  SkillsSearchRequest, SkillsSearchResponse,
} from '../../src/contracts/memory.js';

/**
 * What the OpenAPI document says of each route, beyond what the route registry already knows
 * (method, path, permission, rate class). The schemas are the very ones the routes parse
 * with, so the document cannot drift from the code; a test fails when a registered route has
 * no entry here, or an entry no route.
 */
export interface RouteDoc {
  summary: string;
  description?: string;
  tag: string;
  body?: ZodType;
  /** The body may be omitted entirely (operations without parameters). */
  bodyOptional?: boolean;
  query?: ZodType;
  params?: ZodType;
  /** The success body (JSON); `text` for non-JSON answers. */
  response: ZodType | { text: string };
  /** The success status (200 unless said). */
  status?: number;
  /** Accepts `Prefer: respond-async` (202 with a job). */
  async?: boolean;
  /** Error statuses particular to this route (the common ones are added for every route). */
  errors?: number[];
  /** Error statuses answered with the success body's shape (deep health's 503) instead of ErrorBody. */
  sameShapeErrors?: number[];
}

const KeyPath = z.object({ key: PatternKey });
const NoBody = z.object({}).strict();

export const ROUTE_DOCS: Record<string, RouteDoc> = {
  'GET /v1/version': { tag: 'health', summary: 'Build information (no authentication).', response: VersionResponse },
  'GET /v1/openapi.json': { tag: 'health', summary: 'This OpenAPI 3.1 document (no authentication).', response: z.object({ openapi: z.string() }).passthrough() },
  'GET /v1/health': { tag: 'health', summary: 'Basic health: storage kind and the scope\'s pattern count; `degraded` when the embedding model cannot load.', response: HealthResponse },
  'GET /v1/health/deep': {
    tag: 'health', summary: 'Deep health: probes storage, embedder and LLM with latencies; 503 when storage fails.',
    response: DeepHealthResponse, errors: [503], sameShapeErrors: [503],
  },
  'GET /console': { tag: 'health', summary: '(+) The web console (HTML; on unless SERVICE_CONSOLE=false). It calls this API with the key typed into it.', response: { text: 'text/html' }, errors: [404] },
  'GET /console/assets/{file}': { tag: 'health', summary: '(+) A script or style sheet of the web console.', params: z.object({ file: z.string() }), response: { text: 'text/javascript' }, errors: [404] },
  'GET /metrics': { tag: 'health', summary: 'Prometheus text exposition (only with SERVICE_METRICS=true; Bearer SERVICE_METRICS_TOKEN when set).', response: { text: 'text/plain; version=0.0.4' }, errors: [404] },

  'POST /v1/learn': { tag: 'memory', summary: 'Store a successful run as a pattern (or improve a near-identical one).', body: LearnRequest, response: LearnResponse, errors: [503] },
  'POST /v1/recall': { tag: 'memory', summary: 'Find stored patterns similar to a task; returned reusable matches count as reuse unless `readonly`.', body: RecallRequest, response: RecallResponse },
  'GET /v1/recall': { tag: 'memory', summary: 'Read-only recall with the query in the query string.', query: RecallQueryString, response: RecallResponse },
  'GET /v1/metrics': { tag: 'memory', summary: 'Runs, success rate, average eval score, pattern count and reuse rate of the scope.', response: MetricsResponse },
  'POST /v1/aging': { tag: 'memory', summary: 'Decay success scores by age and prune patterns below 0.1.', body: AgingRequest, bodyOptional: true, response: AgingResponse, async: true },
  'GET /v1/patterns/{key}': { tag: 'memory', summary: 'One stored pattern with all its fields (the export record).', params: KeyPath, response: ExportRecord, errors: [404] },
  'GET /v1/patterns/{key}/history': { tag: 'memory', summary: '(+) A pattern\'s skill tags and its last 20 eval observations, newest first.', params: KeyPath, response: PatternHistoryResponse, errors: [404] },
  'DELETE /v1/patterns/{key}': { tag: 'memory', summary: 'Delete one pattern for good (key URL-encoded, slash as %2F).', params: KeyPath, response: DeletePatternResponse, errors: [404] },
  'POST /v1/skills/register': { tag: 'memory', summary: 'Replace the skill tags of a pattern.', body: SkillsRegisterRequest, response: SkillsRegisterResponse, errors: [404] },
  'POST /v1/skills/search': { tag: 'memory', summary: 'Patterns carrying any (or all) of the given tags.', body: SkillsSearchRequest, response: SkillsSearchResponse },
  'GET /v1/export': { tag: 'import-export', summary: 'Every pattern of the scope with its governance metadata (no vectors).', response: ExportResponse },
  'POST /v1/import': { tag: 'import-export', summary: 'Import records in the export shape; existing keys are skipped unless `overwrite`.', body: ImportRequest, response: ImportResponse, async: true },

  'POST /v1/evaluate': { tag: 'llm', summary: 'Score agent code with several independent LLM evaluators.', body: EvaluateRequest, response: EvaluateResponse, async: true, errors: [501, 503] },
  'POST /v1/compose': { tag: 'llm', summary: 'Split a task into a pipeline of stages backed by stored patterns (experimental).', body: ComposeRequest, response: ComposeResponse, async: true, errors: [501, 502, 503] },
  'POST /v1/evolve': { tag: 'llm', summary: 'Propose and check an improved prompt from recurring feedback (experimental).', body: EvolveRequest, response: EvolveResponse, async: true, errors: [501, 502, 503] },
  'POST /v1/analyze-failures': { tag: 'llm', summary: 'Cluster recurring feedback by meaning (no LLM).', body: AnalyzeFailuresRequest, bodyOptional: true, response: AnalyzeFailuresResponse },
  'GET /v1/feedback': { tag: 'llm', summary: 'Top recurring quality issues.', query: FeedbackQuery, response: FeedbackResponse },
  'POST /v1/feedback/decay': { tag: 'llm', summary: 'Decay feedback clusters by age and prune faded ones.', body: NoBody, bodyOptional: true, response: FeedbackDecayResponse, async: true },

  'GET /v1/jobs': { tag: 'jobs', summary: 'The scope\'s background jobs, newest first.', query: JobListQuery, response: JobListResponse },
  'GET /v1/jobs/{id}': { tag: 'jobs', summary: 'One job with its status and result.', params: JobParams, response: JobRecord, errors: [404] },
  'POST /v1/jobs/{id}/cancel': { tag: 'jobs', summary: 'Cancel a pending job.', params: JobParams, response: JobRecord, errors: [404, 409] },

  'POST /v1/analytics/rollup': { tag: 'analytics', summary: 'Compute the ROI rollup of a window.', body: RollupRequest, response: RollupResponse, async: true },
  'GET /v1/analytics/rollup/{window}': { tag: 'analytics', summary: 'The last computed rollup of a window.', params: RollupParams, response: RollupResponse, errors: [404] },
  'GET /v1/analytics/events': { tag: 'analytics', summary: 'Raw ROI events (metadata only, no task content).', query: EventsQuery, response: EventsResponse },

  'GET /v1/governance/retention': { tag: 'governance', summary: 'The retention policy in force and where it comes from.', response: RetentionPolicyResponse },
  'PUT /v1/governance/retention': { tag: 'governance', summary: 'Set the project\'s retention days (DB auth), or null to inherit.', body: RetentionUpdateRequest, response: RetentionPolicyResponse },
  'POST /v1/governance/retention/apply': { tag: 'governance', summary: 'Delete patterns past their retention (or count them with dry_run).', body: RetentionApplyRequest, bodyOptional: true, response: RetentionApplyResponse, async: true },

  'POST /mcp': {
    tag: 'mcp', summary: 'Model Context Protocol over Streamable HTTP (stateless JSON-RPC; only with SERVICE_MCP=true).',
    description: 'Any valid key opens it; each tool call is checked against the permission of the REST route it maps to.',
    body: z.object({ jsonrpc: z.literal('2.0') }).passthrough(), response: z.object({ jsonrpc: z.literal('2.0') }).passthrough(),
  },
  'GET /v1/governance/export': {
    tag: 'governance', summary: 'Stream every pattern of the scope as NDJSON (one export record plus tenant_id and project_id per line).',
    query: NdjsonExportQuery, response: { text: 'application/x-ndjson' },
  },
  'PUT /v1/governance/patterns/{key}/classify': {
    tag: 'governance', summary: 'Reclassify a pattern; recall and export filters see it at once.', params: ClassifyParams, body: ClassifyRequest, response: ClassifyResponse, errors: [404],
  },
  'DELETE /v1/governance/projects/{project_id}': {
    tag: 'governance', summary: 'Delete a project of the caller\'s tenant with everything in it (irreversible).', params: DeleteProjectParams, response: DeletionResultResponse, async: true, errors: [404],
  },
  'DELETE /v1/governance/tenants/{tenant_id}': {
    tag: 'governance', summary: 'Delete the caller\'s own tenant with all its projects (owner only, irreversible).', params: DeleteTenantParams, response: DeletionResultResponse, async: true, errors: [404],
  },
  'POST /v1/governance/delete-scope': {
    tag: 'governance', summary: 'Delete everything in the caller\'s scope, or count it with dry_run=true.', query: DeleteScopeQuery, response: DeletionResultResponse, async: true,
  },

  'GET /v1/billing/status': { tag: 'billing', summary: 'Plan, subscription status and usage against the plan\'s limits (sandbox when billing is off).', response: BillingStatusResponse },
  'POST /v1/billing/checkout': {
    tag: 'billing', summary: 'Start a checkout for a plan (automatic tax, tax-id collection); 501 without PAYMENT_SECRET_KEY.',
    body: CheckoutRequest, response: CheckoutResponse, errors: [501],
  },
  'GET /v1/billing/portal': { tag: 'billing', summary: 'A link to the payment processor\'s customer portal.', query: PortalQuery, response: PortalResponse, errors: [409, 501] },
  'PATCH /v1/billing/overage': { tag: 'billing', summary: 'Turn overage on or off and set the budget cap (cap on team only).', body: OverageRequest, response: OverageResponse, errors: [501] },
  'POST /v1/billing/webhook': {
    tag: 'billing', summary: 'Payment events from the processor, verified with the Stripe-Signature header (no API key).',
    description: 'The raw body is verified with PAYMENT_WEBHOOK_SECRET; a bad, missing or stale signature is a 400 and changes nothing; each event id is applied once.',
    body: z.object({ id: z.string(), type: z.string() }).passthrough(), response: WebhookResponse, errors: [400, 501],
  },

  'POST /v1/keys/bootstrap': { tag: 'keys', summary: 'Create the first owner key with the bootstrap token (no API key).', body: BootstrapRequest, response: BootstrapResponse, status: 201, errors: [404, 409] },
  'POST /v1/keys': { tag: 'keys', summary: 'Create a key of at most the caller\'s role; the secret is shown once.', body: CreateKeyRequest, response: IssuedKey, status: 201, errors: [404] },
  'GET /v1/keys': { tag: 'keys', summary: 'Keys of the current project (no secrets).', response: KeyListResponse, errors: [404] },
  'DELETE /v1/keys/{id}': { tag: 'keys', summary: 'Revoke a key at once.', params: KeyParams, response: KeyInfo, errors: [404, 409] },
  'POST /v1/keys/{id}/rotate': { tag: 'keys', summary: 'Give a key a new secret; the old one is refused at once.', params: KeyParams, response: IssuedKey, errors: [404] },
};

/** Fastify's `/v1/jobs/:id` → OpenAPI's `/v1/jobs/{id}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}
