import { z } from 'zod';
import { CLASSIFICATIONS, ID, ID_RULE, PATTERN_KEY, PATTERN_KEY_PREFIX, SOURCES } from '../core/vocabulary.js';

export const Classification = z.enum(CLASSIFICATIONS);
export const Source = z.enum(SOURCES);
export const ReuseTier = z.enum(['duplicate', 'adapt', 'fresh']);

/** An unpaired UTF-16 surrogate: PostgreSQL would store U+FFFD instead, JSON storage the escape. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why `s` cannot be stored byte-for-byte on both storages, or null. One rule for every text a
 * caller sends: PostgreSQL text cannot hold NUL and re-encodes lone surrogates, so
 * both are refused at the contract (422 naming the field) rather than altered silently.
 */
export function unstorableText(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain NUL (\\u0000) characters';
  if (LONE_SURROGATE.test(s)) return 'must be valid Unicode (no unpaired surrogate code points)';
  return null;
}

/** A string with a maximum length that both storages keep exactly (see unstorableText). */
export const text = (max: number, tooLong = `must be at most ${max} characters`) =>
  z.string().max(max, tooLong).superRefine((s, ctx) => {
    const problem = unstorableText(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** Non-blank string with a maximum length. */
export const nonBlank = (max: number) => text(max).refine((s) => s.trim().length > 0, 'must not be blank');

/** `patterns/<id>` with a path-safe id (the id rule: core/vocabulary.ts), checked before anything touches storage. */
export const PatternKey = z.string().regex(PATTERN_KEY, `must look like ${PATTERN_KEY_PREFIX}<id> (id: ${ID_RULE})`);

export const ProjectId = z.string().regex(ID, `project ids are ${ID_RULE}`);

/** Latest instant whose ISO-8601 form has a four-digit year (9999-12-31T23:59:59Z), in Unix seconds. */
export const MAX_UNIX_SECONDS = 253_402_300_799;

/** A point in time: ISO 8601 with a time zone (`Z` or an offset). */
export const DateTime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z' });

/**
 * Every stored time is one text form (docs/behavior.md "Timestamps"): UTC at millisecond
 * precision as `Date.toISOString()` writes it, years 0001-9999. The range sits inside
 * PostgreSQL's timestamptz range and keeps four-digit years, so the text sorts as time does and
 * both storages hold, compare and answer the same instant.
 */
export const TIMESTAMP_RANGE = { earliest: '0001-01-01T00:00:00.000Z', latest: '9999-12-31T23:59:59.999Z' } as const;
const EARLIEST_MS = Date.parse(TIMESTAMP_RANGE.earliest);
const LATEST_MS = Date.parse(TIMESTAMP_RANGE.latest);

/**
 * An ISO 8601 date-time in the stored form, or null when it is no date-time or lies outside
 * TIMESTAMP_RANGE. Digits past the millisecond are cut, not rounded (rounding could carry a
 * time past the range's end).
 */
export function normalizedTimestamp(iso: string): string | null {
  const ms = Date.parse(iso.replace(/(\.\d{3})\d+/, '$1'));
  if (!Number.isFinite(ms) || ms < EARLIEST_MS || ms > LATEST_MS) return null;
  return new Date(ms).toISOString();
}

/** An ISO 8601 date-time with a time zone, as input: validated and normalised (normalizedTimestamp). */
export const Timestamp = DateTime.transform((iso, ctx) => {
    const normalized = normalizedTimestamp(iso);
    if (normalized !== null) return normalized;
    ctx.addIssue({ code: 'custom', message: `must lie between ${TIMESTAMP_RANGE.earliest} and ${TIMESTAMP_RANGE.latest}` });
    return z.NEVER;
  });

/** Query strings arrive as text; these coerce and keep the same bounds as the body fields. */
export const queryBool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
export const queryInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
