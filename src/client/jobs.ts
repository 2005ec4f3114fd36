import type { z } from 'zod';
import type { JobAccepted, JobListResponse, JobRecord, JobStatus } from '../contracts/jobs.js';
import { routes, type RouteEntry } from '../contracts/routes.js';
import type { ApiClient } from './api-client.js';
import { ASYNC_ROUTES, resultContract, type AsyncOperation, type AsyncResult } from './async-operations.js';
import { sendSplittingTooLarge } from './import-chunks.js';
import { resolveSchema, type SchemaSource } from './wire.js';

/** A job that ended without a result (failed or cancelled). */
export class JobFailedError extends Error {
  constructor(readonly job: JobRecord) {
    super(job.status === 'cancelled' ? `job ${job.job_id} was cancelled` : `job ${job.job_id} failed: ${job.error ?? 'no reason given'}`);
    this.name = 'JobFailedError';
  }
}

export interface WaitOptions {
  /** Give up after this long (default: wait as long as it takes). */
  timeoutMs?: number;
  /** Called with every polled state (progress display). */
  onPoll?: (job: JobRecord) => void;
}

const FIRST_POLL_MS = 100;
const MAX_POLL_MS = 2000;

export const isFinished = (job: JobRecord) => job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled';

/** Background jobs: submit an operation asynchronously, then read, list, cancel or wait for it. */
export class JobsClient {
  constructor(private readonly client: ApiClient) {}

  /** POSTs an operation with `Prefer: respond-async`: 202 `{job_id, status: 'pending'}`. */
  submit(operation: AsyncOperation, body?: unknown): Promise<JobAccepted> {
    return this.client.callAsync(ASYNC_ROUTES[operation] as RouteEntry, { body });
  }

  get(id: string): Promise<JobRecord> {
    return this.client.call(routes.getJob, { params: { id } });
  }

  list(query: { status?: JobStatus; limit?: number } = {}): Promise<JobListResponse> {
    return this.client.call(routes.listJobs, { query });
  }

  /** Cancels a pending job (409 once it runs or has finished). */
  cancel(id: string): Promise<JobRecord> {
    return this.client.call(routes.cancelJob, { params: { id } });
  }

  /** Polls until the job is completed, failed or cancelled (quickly at first, then every 2 s). */
  async wait(id: string, options: WaitOptions = {}): Promise<JobRecord> {
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    let delay = FIRST_POLL_MS;
    for (;;) {
      const job = await this.get(id);
      options.onPoll?.(job);
      if (isFinished(job)) return job;
      if (Date.now() + delay > deadline) throw new Error(`job ${id} is still ${job.status} after ${Math.round(options.timeoutMs! / 1000)} s`);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(Math.round(delay * 1.5), MAX_POLL_MS);
    }
  }

  /** Submits, waits, and returns the result checked with the synchronous answer's contract. */
  async run<O extends AsyncOperation>(operation: O, body?: unknown, options: WaitOptions = {}): Promise<AsyncResult<O>> {
    const { job_id } = await this.submit(operation, body);
    return this.result(operation, await this.wait(job_id, options));
  }

  /** The result of a finished job of `operation`; JobFailedError when it failed or was cancelled. */
  result<O extends AsyncOperation>(operation: O, job: JobRecord): Promise<AsyncResult<O>> {
    return resultOf(job, resultContract(this.client.schemas, operation));
  }

  /**
   * Submits records as import jobs of at most `chunkSize` records each (10,000 at most); a
   * request the server refuses as too large (413) is split in half and resubmitted.
   */
  async submitImport(records: readonly unknown[], options: ImportJobOptions = {}): Promise<JobAccepted[]> {
    const accepted: JobAccepted[] = [];
    await sendSplittingTooLarge(records, options.chunkSize, async (chunk) => {
      accepted.push(await this.submit('import', { records: chunk, overwrite: options.overwrite ?? false }));
    });
    return accepted;
  }
}

export interface ImportJobOptions {
  overwrite?: boolean;
  /** Records per job (10,000 at most). */
  chunkSize?: number;
}

/**
 * The result of a finished job, parsed with `schema` (a contract or a loader of one, so zod
 * loads only here); JobFailedError when it has none.
 */
export async function resultOf<S extends z.ZodType>(job: JobRecord, schema: SchemaSource<S>): Promise<z.infer<S>> {
  if (job.status !== 'completed') throw new JobFailedError(job);
  return (await resolveSchema(schema)).parse(job.result) as z.infer<S>;
}
