import { z } from 'zod';
import { MAX_RETENTION_DAYS, MIN_RETENTION_DAYS } from '../core/vocabulary.js';
import { Classification, PatternKey, ProjectId, queryBool } from './common.js';
import { ExportRecord } from './memory.js';

/** Wire schemas of the retention endpoints of docs/behavior.md "Governance". */

export const RetentionPolicyResponse = z.object({
  retention_days: z.number().int().min(MIN_RETENTION_DAYS).max(MAX_RETENTION_DAYS),
  /** Which setting decided: the project's, the tenant's, or the 365-day default. */
  source: z.enum(['project', 'tenant', 'default']),
});
export type RetentionPolicyResponse = z.infer<typeof RetentionPolicyResponse>;

export const RetentionUpdateRequest = z.object({
  /** Days counted from a pattern's updated_at; null clears the project's value (inherit). */
  retention_days: z.number().int().min(MIN_RETENTION_DAYS).max(MAX_RETENTION_DAYS).nullable(),
}).strict();
export type RetentionUpdateRequest = z.input<typeof RetentionUpdateRequest>;
export type RetentionUpdateInput = z.output<typeof RetentionUpdateRequest>;

export const RetentionApplyRequest = z.object({
  dry_run: z.boolean().default(false),
}).strict();
export type RetentionApplyRequest = z.input<typeof RetentionApplyRequest>;
export type RetentionApplyInput = z.output<typeof RetentionApplyRequest>;

export const RetentionApplyResponse = z.object({
  purged_count: z.number().int().min(0),
  /** (+) Evaluation runs past the same retention (blessed baselines are kept); present when any went. */
  evaluation_runs_purged: z.number().int().min(0).optional(),
  dry_run: z.boolean(),
});
export type RetentionApplyResponse = z.infer<typeof RetentionApplyResponse>;

/** PUT /v1/governance/patterns/{key}/classify */
export const ClassifyRequest = z.object({ classification: Classification }).strict();
export type ClassifyRequest = z.input<typeof ClassifyRequest>;

/** The updated pattern: its export record (every field plus governance metadata). */
export const ClassifyResponse = ExportRecord;
export type ClassifyResponse = z.infer<typeof ClassifyResponse>;

/**
 * One line of GET /v1/governance/export: the export record of GET /v1/export plus the scope it
 * came from. `service import` accepts files of these lines.
 */
export const NdjsonExportRecord = ExportRecord.extend({ tenant_id: z.string(), project_id: z.string() });
export type NdjsonExportRecord = z.infer<typeof NdjsonExportRecord>;

/** `?classification=public,internal`: comma-separated; an unknown name is a 422 naming it. */
export const NdjsonExportQuery = z.object({
  classification: z.string().max(200).optional(),
}).strict();

/** docs/behavior.md "Governance"; project_id is "*" for a whole tenant. */
export const DeletionResultResponse = z.object({
  tenant_id: z.string(),
  project_id: z.string(),
  patterns_deleted: z.number().int().min(0),
  jobs_deleted: z.number().int().min(0),
  keys_revoked: z.number().int().min(0),
  projects_deleted: z.number().int().min(0),
  /** (+) true when nothing was deleted (a deletion with dry_run). */
  dry_run: z.boolean(),
  /** (+) Things the caller should know first, e.g. that its own key is among keys_revoked. */
  warnings: z.array(z.string()).optional(),
});
export type DeletionResultResponse = z.infer<typeof DeletionResultResponse>;

export const DeleteScopeQuery = z.object({ dry_run: queryBool.default(false) }).strict();
/** (+) The project and tenant deletions take the same `?dry_run=true`: count, delete nothing. */
export const DeletionQuery = DeleteScopeQuery;
/** POST /v1/governance/delete-scope may carry dry_run in its body too; any other field is refused. */
export const DeleteScopeBody = z.object({ dry_run: z.boolean().optional() }).strict();

/** Path parameters of the deletion routes (ids of the shape every scope id has). */
export const DeleteProjectParams = z.object({ project_id: ProjectId }).strict();
export const DeleteTenantParams = z.object({ tenant_id: ProjectId }).strict();

/** What an asynchronous deletion job runs with (validated and authorised before queueing). */
export const DeletionJobInput = z.object({
  tenant_id: ProjectId,
  project_id: ProjectId.nullable(),
  dry_run: z.boolean(),
  kind: z.enum(['project', 'tenant', 'scope']),
}).strict();
export type DeletionJobInput = z.infer<typeof DeletionJobInput>;
/** What is being deleted: one project, a whole tenant, or the caller's own scope. */
export type DeletionKind = DeletionJobInput['kind'];

export const ClassifyParams = z.object({ key: PatternKey }).strict();
