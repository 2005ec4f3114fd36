import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { DomainError, StorageUnavailableError } from '../core/errors.js';
import { workerIdWithWindow } from '../core/job-lease.js';
import type { StoredJob } from '../ports/jobs.js';
import { systemContext } from './audit.js';
import type { ServiceDeps } from './deps.js';
import { jobOperation } from './job-operations.js';
import { jobQueue, type JobPayload } from './jobs.js';

/** A job runs at most twice: a run interrupted by a dead worker is retried once. */
export const MAX_JOB_ATTEMPTS = 2;
/** Finished jobs are kept this long, then deleted. */
export const FINISHED_JOB_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export interface JobRunnerOptions {
  /** Identifies this worker in the queue (default: host, pid and a random suffix). */
  workerId?: string;
  /** Fallback poll when no wake-up arrives (SERVICE_JOB_POLL_INTERVAL). */
  pollIntervalMs: number;
  /** Jobs run at once by this process (SERVICE_JOB_MAX_CONCURRENT). */
  maxConcurrent: number;
  /** A running job without a heartbeat for this long was left by a dead worker. */
  staleAfterMs: number;
  /** How long stop() waits for running jobs before leaving them to stale recovery. */
  shutdownGraceMs?: number;
}

const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
/** Stale recovery and cleanup run at most this often (and at start). */
const MAINTENANCE_EVERY_MS = 60 * 60 * 1000;

/** Tries of a job step whose database connection was lost, and the pause before the next (grows linearly). */
const STORAGE_LOSS_ATTEMPTS = 4;
const STORAGE_LOSS_PAUSE_MS = 250;

/**
 * The worker of one process: claims pending jobs (at most `maxConcurrent` running), runs each
 * with the same service function as the synchronous route, records the result or the error,
 * beats a heartbeat for the jobs it runs, requeues jobs left by dead workers and deletes
 * finished jobs after 7 days. Woken by the queue on enqueue; polls as a fallback.
 */
export class JobRunner {
  readonly workerId: string;
  private readonly running = new Map<string, Promise<void>>();
  private pollTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private lastStaleCheck = -Infinity;
  private lastPurge = -Infinity;
  /** A claim failed: it may have committed with its answer lost (see releaseLostClaims). */
  private claimInDoubt = false;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly opts: JobRunnerOptions,
  ) {
    this.workerId = opts.workerId ?? workerIdWithWindow(`${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`, opts.staleAfterMs);
  }

  /** Starts polling (a second call does nothing). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.deps.storage.jobs.subscribe(() => void this.wake());
    // Stale checks must come well within the stale window, or recovery waits for the hour.
    const beat = Math.max(50, Math.min(this.opts.staleAfterMs / 4, 15_000));
    this.heartbeatTimer = setInterval(() => void this.beat(), beat);
    this.heartbeatTimer.unref();
    void this.wake();
  }

  /** Stops claiming; waits up to the grace period for running jobs. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    if (this.pollTimer) clearTimeout(this.pollTimer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.pollTimer = this.heartbeatTimer = null;
    // A tick in progress may still be claiming: its jobs must be waited for too.
    await this.ticking;
    const inFlight = Promise.all(this.running.values());
    const grace = this.opts.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    const finished = await Promise.race([inFlight.then(() => true), sleep(grace, false, { ref: false })]);
    if (!finished) {
      // Left running: another worker (or this one after a restart) recovers them as stale.
      this.deps.logger.warn({ jobs: [...this.running.keys()] }, 'jobs still running at shutdown; they will be retried');
    }
  }

  /** Jobs this worker is running now. */
  get active(): number {
    return this.running.size;
  }

  /**
   * Runs a tick (maintenance, then claiming) now, or right after the current one; resolves
   * when that tick is done. Never rejects: a failing queue is logged and retried at the next poll.
   */
  wake(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.ticking) {
      this.again = true;
      // The current tick loops once more, or (if it was already ending) a fresh one follows it.
      return this.ticking.then(() => this.ticking ?? undefined);
    }
    this.ticking = this.tick().finally(() => {
      this.ticking = null;
      // A wake-up that arrived after the tick's last round must not wait for the next poll.
      if (this.again) void this.wake();
    });
    return this.ticking;
  }

  private async tick(): Promise<void> {
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = null;
    try {
      do {
        this.again = false;
        await this.maintain();
        await this.claimAndRun();
      } while (this.again && !this.stopped);
    } catch (err) {
      this.deps.logger.warn({ err }, 'job queue unavailable; retrying at the next poll');
    } finally {
      if (!this.stopped) {
        this.pollTimer = setTimeout(() => void this.wake(), this.opts.pollIntervalMs);
        this.pollTimer.unref();
      }
    }
  }

  private async claimAndRun(): Promise<void> {
    const free = this.opts.maxConcurrent - this.running.size;
    if (free <= 0) return;
    const queue = jobQueue(this.deps);
    if (this.claimInDoubt) await this.releaseLostClaims();
    let claimed: StoredJob[];
    try {
      claimed = await queue.claim(this.workerId, free, this.now());
    } catch (err) {
      // The claim may have committed and only its answer been lost (a dropped connection): its
      // jobs would sit as ours, unrun, until the stale window. The next tick hands them back.
      this.claimInDoubt = true;
      throw err;
    }
    for (const job of claimed) {
      // Each job run is a root span of its own (it outlives the request that queued it).
      const tracer = this.deps.tracer;
      const traced = () => this.execute(job);
      const started = tracer
        ? tracer.inSpan(`job ${job.operation}`, { 'job.id': job.job_id, 'job.operation': job.operation, 'job.attempt': job.attempts, 'tenant.id': job.tenant_id, 'project.id': job.project_id }, traced)
        : traced();
      const run = started.finally(() => {
        this.running.delete(job.job_id);
        void this.wake(); // a slot is free: more jobs may be waiting
      });
      this.running.set(job.job_id, run);
    }
  }

  /** Jobs the queue says this worker runs but it never heard of go back to pending, at once. */
  private async releaseLostClaims(): Promise<void> {
    const released = await jobQueue(this.deps).releaseLostClaims(this.workerId, [...this.running.keys()]);
    this.claimInDoubt = false;
    if (released.length > 0) this.deps.logger.warn({ released }, 'released jobs claimed by a request whose answer was lost');
  }

  private async execute(job: StoredJob): Promise<void> {
    const { deps } = this;
    const queue = jobQueue(deps);
    const scope = { tenant_id: job.tenant_id, project_id: job.project_id };
    const log = { ...scope, job_id: job.job_id, operation: job.operation, attempt: job.attempts };
    const payload = (job.payload ?? {}) as Partial<JobPayload>;
    const operation = jobOperation(job.operation);
    let outcome: { ok: true; result: unknown } | { ok: false; error: string };
    try {
      if (!operation) throw new Error(`unknown job operation "${job.operation}"`);
      const result = await this.runThroughStorageLoss(log, () => operation.run(deps, scope, payload.input, payload.ctx ?? systemContext, { job_id: job.job_id }));
      // The stored result must be what the synchronous route would have sent: JSON, as serialised.
      outcome = { ok: true, result: result === undefined ? null : JSON.parse(JSON.stringify(result)) };
    } catch (err) {
      // Domain errors carry the same message the synchronous route would answer with; anything
      // else is a bug whose details belong in the log, not in a record callers read. An
      // internal_error's message is safe to show, and its cause is logged as the server's is.
      const known = err instanceof DomainError || !operation;
      if (!known || (err instanceof DomainError && err.code === 'internal_error')) deps.logger.error({ ...log, err }, 'job failed unexpectedly');
      outcome = { ok: false, error: known ? (err as Error).message : 'internal error' };
    }
    try {
      const stored = await this.runThroughStorageLoss(log, () => outcome.ok
        ? queue.complete(job.job_id, this.workerId, outcome.result, this.now())
        : queue.fail(job.job_id, this.workerId, outcome.error, this.now()));
      const status = outcome.ok ? 'completed' : 'failed';
      if (stored) {
        deps.instruments.jobCompleted(job.operation, status);
        deps.logger.info({ ...log, status }, `job ${status}`);
      } else {
        deps.logger.warn(log, 'job was taken over by another worker before it finished; its result is discarded');
      }
    } catch (err) {
      deps.logger.warn({ ...log, err }, 'could not record the job outcome; it will be retried as stale');
    }
  }

  /**
   * Runs `step` again (after a short pause) when it fails because the database connection was
   * lost: the pool opens a fresh one, so a dropped connection costs a retry, not the job. A
   * job's operations may run twice by design (stale recovery reruns them; import's records
   * carry ids derived from the job id), and the job stays claimed, heart-beaten, meanwhile.
   */
  private async runThroughStorageLoss<T>(log: Record<string, unknown>, step: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await step();
      } catch (err) {
        if (!(err instanceof StorageUnavailableError) || attempt >= STORAGE_LOSS_ATTEMPTS || this.stopped) throw err;
        this.deps.logger.warn({ ...log, err: err.message, attempt }, 'job step lost its database connection; retrying');
        await sleep(STORAGE_LOSS_PAUSE_MS * attempt, undefined, { ref: false });
      }
    }
  }

  private async beat(): Promise<void> {
    if (this.stopped) return;
    try {
      if (this.running.size > 0) await jobQueue(this.deps).heartbeat(this.workerId, [...this.running.keys()], this.now());
    } catch (err) {
      this.deps.logger.warn({ err }, 'job heartbeat failed');
    }
    // Stale recovery rides on the heartbeat clock: it must notice a dead worker within the window.
    const staleCheckEvery = Math.max(50, this.opts.staleAfterMs / 2);
    if (this.nowMs() - this.lastStaleCheck >= staleCheckEvery) void this.wake();
  }

  /** Stale recovery (within the stale window) and the 7-day cleanup (hourly). */
  private async maintain(): Promise<void> {
    const queue = jobQueue(this.deps);
    const now = this.nowMs();
    if (now - this.lastStaleCheck >= Math.min(this.opts.staleAfterMs / 2, MAINTENANCE_EVERY_MS)) {
      this.lastStaleCheck = now;
      const outcome = await queue.requeueStale(new Date(now - this.opts.staleAfterMs).toISOString(), this.now(), MAX_JOB_ATTEMPTS);
      for (const job of outcome.failed) this.deps.instruments.jobCompleted(job.operation, 'failed');
      if (outcome.requeued.length + outcome.failed.length > 0) {
        this.deps.logger.warn({ requeued: outcome.requeued, failed: outcome.failed }, 'recovered jobs of a worker that stopped');
      }
    }
    if (now - this.lastPurge >= MAINTENANCE_EVERY_MS) {
      this.lastPurge = now;
      const purged = await queue.purgeFinished(new Date(now - FINISHED_JOB_RETENTION_MS).toISOString());
      if (purged > 0) this.deps.logger.info({ purged }, 'deleted jobs finished more than 7 days ago');
    }
  }

  private nowMs(): number {
    return this.deps.clock.now().getTime();
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }
}
