import { DomainError, InsufficientStorageError, UnavailableError } from '../core/errors.js';

/**
 * What a failed write means for the caller, so that only what may work on the next try is
 * called an outage:
 * - `full`: the store has no room (507; works again once space is freed);
 * - `unavailable`: the store unreachable or faulting (a lost PostgreSQL connection, a disk I/O
 *   error): the same write may succeed on the next try;
 * - `domain`: a refusal the caller can act on (a quota, a conflict), with its own code;
 * - `refused`: anything else fails the same way every time (a row the database refuses, a
 *   bug): trying again does not help.
 */
export type StorageFault = 'full' | 'unavailable' | 'domain' | 'refused';

export function classifyStorageFault(err: unknown): StorageFault {
  if (err instanceof InsufficientStorageError || ['ENOSPC', 'EDQUOT'].includes(String(errnoOf(err)))) return 'full';
  if (err instanceof UnavailableError || fileSystemErrno(err) !== null) return 'unavailable';
  if (err instanceof DomainError && err.code !== 'internal_error') return 'domain';
  return 'refused';
}

/** The errno code of a file system error (EIO, EROFS, …: the JSON store's disk), else null. */
export function fileSystemErrno(err: unknown): string | null {
  const code = errnoOf(err);
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : null;
}

const errnoOf = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code;
