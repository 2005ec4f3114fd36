import type { z } from 'zod';
import { ValidationError, type FieldError } from '../src/core/errors.js';

/**
 * Parses request data with a contract schema; a mismatch throws ValidationError (422
 * `{detail, errors:[{path, message}]}`), whose detail names the first problem so a CLI user
 * sees it without reading the list.
 */
export function parseWith<S extends z.ZodType>(schema: S, data: unknown, what = 'body'): z.output<S> {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  const errors: FieldError[] = parsed.error.issues.map((issue) => ({
    path: issue.path.length > 0 ? issue.path.map(String).join('.') : what,
    message: issue.message,
  }));
  const first = errors[0];
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  const where = first.path === what ? '' : `${first.path}: `;
  throw new ValidationError(`invalid ${what}: ${where}${first.message}${more}`, errors);
}
