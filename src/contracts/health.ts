import { z } from 'zod';

export const HealthResponse = z.object({
  /** `degraded` when the embedding model cannot load or answer (recall falls back to keywords). */
  status: z.enum(['ok', 'degraded']),
  storage: z.string(),
  pattern_count: z.number().int(),
});
export type HealthResponse = z.infer<typeof HealthResponse>;

const Check = z.object({ status: z.string(), latency_ms: z.number().nullable() }).passthrough();

export const DeepHealthResponse = z.object({
  status: z.enum(['ok', 'degraded', 'error']),
  version: z.string(),
  uptime_seconds: z.number(),
  checks: z.object({ storage: Check, llm: Check, embedding: Check }).passthrough(),
  /** (+) Thresholds in force; each source is env, model_config, builtin or spec_default. */
  reuse_tiers: z.object({
    duplicate: z.number(),
    adapt: z.number(),
    source: z.object({ duplicate: z.string(), adapt: z.string() }),
    model: z.string(),
    /** (+) `fixed` or `calibrated` (docs/behavior.md "Reuse tiers"), and where that came from. */
    policy: z.enum(['fixed', 'calibrated']).optional(),
    policy_source: z.string().optional(),
  }).optional(),
  /** (+) The tier policy in force for the caller's project, with its fitted adapt threshold. */
  tier_policy: z.object({
    policy: z.enum(['fixed', 'calibrated']),
    duplicate_threshold: z.number().nullable(),
    adapt_threshold: z.number(),
    source: z.string(),
    patterns: z.number().int(),
    sampled: z.number().int().nullable(),
    fitted_at: z.string().nullable(),
  }).optional(),
});
export type DeepHealthResponse = z.infer<typeof DeepHealthResponse>;

/** (+) Liveness: the process answers. Nothing else is said (the route takes no key). */
export const LivenessResponse = z.object({ status: z.literal('up') }).strict();
export type LivenessResponse = z.infer<typeof LivenessResponse>;

/** (+) Readiness: `ready` (200) when storage answers a query, else `not_ready` (503); nothing more. */
export const ReadinessResponse = z.object({ status: z.enum(['ready', 'not_ready']) }).strict();
export type ReadinessResponse = z.infer<typeof ReadinessResponse>;

export const VersionResponse = z.object({
  app_version: z.string(),
  api_version: z.literal('v1'),
  git_commit: z.string(),
  build_time: z.string(),
});
export type VersionResponse = z.infer<typeof VersionResponse>;

/** GET /v1/openapi.json: an OpenAPI document (checked only for its version field). */
export const OpenApiDocumentResponse = z.object({ openapi: z.string() }).passthrough();

/** GET /console/assets/{file}: a hashed asset name (checked further by the route itself). */
export const ConsoleAssetParams = z.object({ file: z.string() });
