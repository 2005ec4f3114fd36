import {
  DomainError, InsufficientStorageError, InternalError, StorageUnavailableError, UnavailableError, type PartialProgress,
} from '../core/errors.js';

/**
 * The answer of an import that a write failure stopped part-way, carrying how far it got
 * (docs/behavior.md "Import"): the counts and the last record written, in the body and the
 * message. The failure is classified, because only some are worth the same request again:
 * - the store unreachable or faulting (a lost PostgreSQL connection, a disk I/O error): 503,
 *   re-run the import (records already stored are skipped);
 * - the store full: 507;
 * - a refusal the caller can act on (a quota): its own code, with the counts;
 * - anything else fails the same way every time (a row the database refuses, a bug): 500,
 *   its cause logged and never shown, and no advice to re-run.
 */
export function importStopped(err: unknown, progress: PartialProgress, atomicBatches: boolean): DomainError {
  const counts = writtenSoFar(progress, atomicBatches);
  if (err instanceof InsufficientStorageError || isOutOfSpace(err)) {
    return new InsufficientStorageError(`import stopped: the storage is full${describeFault(err)}: ${counts}`, { cause: err }).withProgress(progress);
  }
  if (err instanceof UnavailableError || isFileSystemFault(err)) {
    const why = err instanceof UnavailableError ? ` (${err.message})` : describeFault(err);
    return new StorageUnavailableError(
      `import stopped by a storage failure${why}: ${counts}: re-run the import (records already stored are skipped)`,
      { cause: err },
    ).withProgress(progress);
  }
  if (err instanceof DomainError && err.code !== 'internal_error') return err.withProgress(progress);
  return new InternalError(
    `import stopped by an unexpected error (logged): ${counts}; the same records would fail again until its cause is fixed`,
    { cause: err },
  ).withProgress(progress);
}

/** The counts as a sentence: what is stored, and what is not. */
export function writtenSoFar(p: PartialProgress, atomicBatches: boolean): string {
  const rest = atomicBatches ? 'none of the rest' : 'records of the failed batch may be partly written';
  const last = p.last_written ? ` (the last written: record ${p.last_written.index}, ${p.last_written.key})` : '';
  return `${p.imported} of ${p.total} records were written (${p.skipped} skipped), ${rest}${last}`;
}

const errnoOf = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code;

const isOutOfSpace = (err: unknown) => ['ENOSPC', 'EDQUOT'].includes(String(errnoOf(err)));

/** A file system error (EIO, EROFS, …): the JSON store's disk, which may work on the next try. */
const isFileSystemFault = (err: unknown) => {
  const code = errnoOf(err);
  return typeof code === 'string' && /^E[A-Z]+$/.test(code);
};

const describeFault = (err: unknown) => (isFileSystemFault(err) ? ` (${String(errnoOf(err))})` : '');
