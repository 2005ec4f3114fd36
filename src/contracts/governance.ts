import { z } from 'zod';
import { MAX_RETENTION_DAYS, MIN_RETENTION_DAYS } from '../core/vocabulary.js';

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

export const RetentionApplyRequest = z.object({
  dry_run: z.boolean().default(false),
}).strict();
export type RetentionApplyRequest = z.input<typeof RetentionApplyRequest>;

export const RetentionApplyResponse = z.object({
  purged_count: z.number().int().min(0),
  dry_run: z.boolean(),
});
export type RetentionApplyResponse = z.infer<typeof RetentionApplyResponse>;
