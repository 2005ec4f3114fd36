import { z } from 'zod';
import { MAX_TASK_CHARS } from '../core/vocabulary.js';
import { Classification, MAX_UNIX_SECONDS, Source, nonBlank } from './common.js';

/** The wire's rule for telling the forms apart: a record with a `version` key is the reference's. */
const isVersionedRecord = (value: unknown): value is { version: unknown } =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, 'version');


/**
 * The reference system's export record, version 1 (see src/core/reference-records.ts). The
 * key is only a string here: one outside `patterns/` is reported as skipped, not refused.
 */
export const ReferenceRecordV1 = z.object({
  version: z.literal(1),
  key: z.string().max(200),
  data: z.object({
    task: nonBlank(MAX_TASK_CHARS),
    design: z.object({
      code: nonBlank(500_000),
      output: z.string().max(500_000).nullable().optional(),
      classification: Classification.optional(),
      source: Source.optional(),
    }),
    success_score: z.number().min(0).max(10),
    reuse_count: z.number().int().min(0).optional(),
    timestamp: z.number().min(0).max(MAX_UNIX_SECONDS).optional(),
  }),
});
export type ReferenceRecordV1 = z.input<typeof ReferenceRecordV1>;

/** A versioned record of another version: kept only to be reported as skipped. */
export const ForeignVersionRecord = z.object({ version: z.unknown(), key: z.unknown().optional() });

/**
 * One import record in any accepted form: a record with a `version` is the reference's shape
 * (version 1 validated in full, others passed on to be skipped), anything else our flat shape.
 * The form is picked first so that errors name the fields of that form, not "invalid union".
 * Parsing its output again gives the same output (async import jobs re-read their payload).
 */
export function anyImportRecord<F extends z.ZodType>(flat: F) {
  return z.unknown().transform((value, ctx) => {
    const versioned = isVersionedRecord(value);
    const schema: z.ZodType = !versioned ? flat : value.version === 1 ? ReferenceRecordV1 : ForeignVersionRecord;
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.issues.push({ ...issue, input: value } as never);
      return z.NEVER;
    }
    return parsed.data as z.output<F> | z.output<typeof ReferenceRecordV1> | z.output<typeof ForeignVersionRecord>;
  });
}
