import { ValidationError } from './errors.js';
import { patternKeyProblem, type Classification, type Source } from './types.js';

/**
 * The reference system's export record, as its `export` writes it:
 * `{version: 1, key, data: {task, design: {code, output?, classification?, source?},
 * success_score, reuse_count, timestamp}}` with `timestamp` in unix seconds. Import reads it
 * next to our own flat records; this module maps it onto the flat shape, or says why not.
 */
export interface ReferenceRecordV1 {
  version: 1;
  key: string;
  data: {
    task: string;
    design: { code: string; output?: string | null; classification?: Classification; source?: Source };
    success_score: number;
    reuse_count?: number;
    timestamp?: number;
  };
}

/** A versioned record of a version this service does not know: skipped, with the reason. */
export interface ForeignVersionRecord {
  version: unknown;
  key?: unknown;
}

/** Our flat import record, in the fields a reference record can fill. */
export interface FlatImportRecord {
  key?: string;
  task: string;
  code: string;
  output?: string | null;
  eval_score: number;
  success_score?: number;
  reuse_count?: number;
  classification?: Classification;
  source?: Source;
  created_at?: string;
  updated_at?: string;
}

export interface RejectedImportRecord {
  /** Position in the request's records. */
  index: number;
  key: string | null;
  reason: string;
}

/** True for a record in the reference's versioned form (whatever its version). */
export function isVersionedRecord(value: unknown): value is ForeignVersionRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, 'version');
}


/**
 * A version-1 record as a flat one: the reference has no separate eval score, so its
 * success_score is both; its one timestamp is both created_at and updated_at.
 */
export function fromReferenceRecord(r: ReferenceRecordV1): FlatImportRecord {
  const { task, design, success_score, reuse_count, timestamp } = r.data;
  const flat: FlatImportRecord = {
    key: r.key,
    task,
    code: design.code,
    eval_score: success_score,
    success_score,
    reuse_count: reuse_count ?? 0,
  };
  if (design.output !== undefined) flat.output = design.output;
  if (design.classification !== undefined) flat.classification = design.classification;
  if (design.source !== undefined) flat.source = design.source;
  if (timestamp !== undefined) {
    const at = new Date(timestamp * 1000).toISOString();
    flat.created_at = at;
    flat.updated_at = at;
  }
  return flat;
}

/**
 * Splits a request's records (already validated by the contract) into those to import, as
 * flat records, and those that cannot be: an unknown version, or a key outside `patterns/`.
 */
export function sortImportRecords<T extends object>(
  records: ReadonlyArray<T | ReferenceRecordV1 | ForeignVersionRecord>,
): { importable: (T | FlatImportRecord)[]; rejected: RejectedImportRecord[] } {
  const importable: (T | FlatImportRecord)[] = [];
  const rejected: RejectedImportRecord[] = [];
  records.forEach((r, index) => {
    if (!isVersionedRecord(r)) {
      importable.push(r as T);
      return;
    }
    const key = typeof r.key === 'string' ? r.key : null;
    if (r.version !== 1) {
      rejected.push({ index, key, reason: `unsupported version ${JSON.stringify(r.version) ?? 'undefined'} (this service reads version 1)` });
      return;
    }
    const problem = key === null ? 'key missing' : patternKeyProblem(key);
    if (problem !== null) {
      rejected.push({ index, key, reason: problem });
      return;
    }
    importable.push(fromReferenceRecord(r as ReferenceRecordV1));
  });
  return { importable, rejected };
}

/**
 * NDJSON text as a list of values: one JSON value a line, blank lines ignored. Throws a
 * ValidationError naming the first line that is not JSON.
 */
export function parseNdjsonLines(text: string): unknown[] {
  const values: unknown[] = [];
  const lines = text.split('\n');
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '') continue;
    try {
      values.push(JSON.parse(line));
    } catch (err) {
      throw new ValidationError(`invalid NDJSON body: line ${i + 1}: ${(err as Error).message}`, [
        { path: `line ${i + 1}`, message: 'not a JSON value' },
      ]);
    }
  }
  return values;
}
