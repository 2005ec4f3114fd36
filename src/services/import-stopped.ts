import { DomainError, InsufficientStorageError, InternalError, StorageUnavailableError, UnavailableError, type PartialProgress } from '../core/errors.js';
import { classifyStorageFault, fileSystemErrno } from './storage-faults.js';

/**
 * The answer of an import that a write failure stopped part-way, carrying how far it got
 * (docs/behavior.md "Faults"): the counts and the last record written, in the body and the
 * message. Only a failure the next try may not meet (storage-faults.ts) advises a re-run:
 * - the store unreachable or faulting: 503, re-run the import (stored records are skipped);
 * - the store full: 507;
 * - a refusal the caller can act on (a quota): its own code, with the counts;
 * - anything else fails the same way every time: 500, its cause logged and never shown.
 */
export function importStopped(err: unknown, progress: PartialProgress, atomicBatches: boolean): DomainError {
  const counts = writtenSoFar(progress, atomicBatches);
  const errno = fileSystemErrno(err);
  const why = err instanceof UnavailableError ? ` (${err.message})` : errno ? ` (${errno})` : '';
  switch (classifyStorageFault(err)) {
    case 'full':
      return new InsufficientStorageError(`import stopped: the storage is full${why}: ${counts}`, { cause: err }).withProgress(progress);
    case 'unavailable':
      return new StorageUnavailableError(
        `import stopped by a storage failure${why}: ${counts}: re-run the import (records already stored are skipped)`,
        { cause: err },
      ).withProgress(progress);
    case 'domain':
      return (err as DomainError).withProgress(progress);
    case 'refused':
      return new InternalError(
        `import stopped by an unexpected error (logged): ${counts}; the same records would fail again until its cause is fixed`,
        { cause: err },
      ).withProgress(progress);
  }
}

/** The counts as a sentence: what is stored, and what is not. */
export function writtenSoFar(p: PartialProgress, atomicBatches: boolean): string {
  const rest = atomicBatches ? 'none of the rest' : 'records of the failed batch may be partly written';
  const last = p.last_written ? ` (the last written: record ${p.last_written.index}, ${p.last_written.key})` : '';
  return `${p.imported} of ${p.total} records were written (${p.skipped} skipped), ${rest}${last}`;
}
