import type { FeedbackCluster, PatternRecord } from './types.js';

/**
 * Text written before the contract refused NUL can still sit in JSON storage.
 * PostgreSQL text cannot hold U+0000, so copying such data drops the NUL characters; every
 * other character, lone surrogates included (the driver sends them as U+FFFD), passes as is.
 */
export function withoutNul(s: string): string {
  return s.includes('\u0000') ? s.split('\u0000').join('') : s;
}

const nullable = (s: string | null): string | null => (s === null ? null : withoutNul(s));

/** The record with NUL removed from every free-text field; `changed` says whether any was. */
export function patternWithoutNul(p: PatternRecord): { record: PatternRecord; changed: boolean } {
  const record: PatternRecord = {
    ...p,
    task: withoutNul(p.task),
    code: withoutNul(p.code),
    output: nullable(p.output),
    run_id: nullable(p.run_id),
    author: nullable(p.author),
  };
  const changed = record.task !== p.task || record.code !== p.code || record.output !== p.output
    || record.run_id !== p.run_id || record.author !== p.author;
  return { record, changed };
}

export function clusterWithoutNul(c: FeedbackCluster): FeedbackCluster {
  return { ...c, text: withoutNul(c.text), tasks: c.tasks.map(withoutNul) };
}
