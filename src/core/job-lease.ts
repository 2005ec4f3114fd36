/**
 * A running job belongs to the worker that claimed it for as long as that worker beats its
 * heartbeat within ITS OWN stale window. Another process, whatever its SERVICE_JOB_STALE_SECONDS,
 * must not take the job over earlier: a process configured with a short window
 * would otherwise re-run the jobs of a healthy neighbour. The owner's window travels in its
 * worker id (stored as the job's locked_by): `<host>:<pid>:<random>~<window ms>`.
 */

const WINDOW_SUFFIX = /~(\d+)$/;

export function workerIdWithWindow(base: string, staleAfterMs: number): string {
  return `${base}~${Math.max(0, Math.round(staleAfterMs))}`;
}

/** The stale window the owner declared, in ms; 0 when its id carries none. */
export function ownerWindowMs(lockedBy: string | null): number {
  const m = lockedBy === null ? null : WINDOW_SUFFIX.exec(lockedBy);
  return m ? Number(m[1]) : 0;
}

/**
 * True when a running job may be taken back: no heartbeat at all, or its last heartbeat is
 * older than both the caller's cut-off and the owner's own window.
 */
export function isAbandoned(job: { heartbeat_at: string | null; locked_by: string | null }, staleBefore: string, at: string): boolean {
  if (job.heartbeat_at === null) return true;
  if (job.heartbeat_at >= staleBefore) return false;
  const ownerCutoff = new Date(Date.parse(at) - ownerWindowMs(job.locked_by)).toISOString();
  return job.heartbeat_at < ownerCutoff;
}
