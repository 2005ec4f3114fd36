import { z } from 'zod';
import { CLASSIFICATIONS, SOURCES } from '../core/vocabulary.js';

export const Classification = z.enum(CLASSIFICATIONS);
export const Source = z.enum(SOURCES);
export const ReuseTier = z.enum(['duplicate', 'adapt', 'fresh']);

/** Non-blank string with a maximum length. */
export const nonBlank = (max: number) =>
  z.string().max(max, `must be at most ${max} characters`).refine((s) => s.trim().length > 0, 'must not be blank');

/** `patterns/<id>` with a path-safe id (checked before anything touches storage). */
export const PatternKey = z
  .string()
  .regex(/^patterns\/[0-9a-z]{1,64}$/, 'must look like patterns/<id> (id: lower-case letters and digits)');

export const ProjectId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'project ids are 1-64 letters, digits, _ or -');

/** Query strings arrive as text; these coerce and keep the same bounds as the body fields. */
export const queryBool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
export const queryInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
