import { z } from 'zod';
import { JOB_STATUSES } from '../core/vocabulary.js';
import { queryInt } from './common.js';

/** Wire schemas of docs/behavior.md "Jobs" and of the 202 answer to `Prefer: respond-async`. */

export const JobStatus = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof JobStatus>;

/** 202 body of an operation called with `Prefer: respond-async` (plus `Location: /v1/jobs/<id>`). */
export const JobAccepted = z.object({
  job_id: z.string(),
  status: z.literal('pending'),
});
export type JobAccepted = z.infer<typeof JobAccepted>;

export const JobRecord = z.object({
  job_id: z.string(),
  /** evaluate, compose, evolve, aging, feedback_decay, import, analytics_rollup, retention_apply. */
  operation: z.string(),
  status: JobStatus,
  created_at: z.string(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  attempts: z.number().int().min(0),
  /** The synchronous response body of the operation, once completed (else null). */
  result: z.unknown(),
  error: z.string().nullable(),
});
export type JobRecord = z.infer<typeof JobRecord>;

export const JobListQuery = z.object({
  status: JobStatus.optional(),
  limit: queryInt(1, 100).default(20),
}).strict();
export type JobListQuery = z.input<typeof JobListQuery>;
export type JobListInput = z.output<typeof JobListQuery>;

export const JobListResponse = z.object({
  jobs: z.array(JobRecord),
  count: z.number().int().min(0),
});
export type JobListResponse = z.infer<typeof JobListResponse>;

export const JobParams = z.object({ id: z.string() });
