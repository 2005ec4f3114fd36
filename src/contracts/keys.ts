import { z } from 'zod';
import { ROLES } from '../core/vocabulary.js';
import { DateTime, ProjectId, queryBool, text } from './common.js';

export const Role = z.enum(ROLES);
export const KeyId = z.uuid('must be an API key id (a UUID)');

export const BootstrapRequest = z.object({
  token: text(4096).pipe(z.string().min(1, 'must not be empty')),
}).strict();
export type BootstrapRequest = z.input<typeof BootstrapRequest>;

export const BootstrapResponse = z.object({
  key_id: KeyId,
  secret: z.string(),
  role: z.literal('owner'),
  tenant_id: z.string().optional(),
  project_id: z.string().optional(),
});
export type BootstrapResponse = z.infer<typeof BootstrapResponse>;

export const CreateKeyRequest = z.object({
  name: text(100, 'must be 1 to 100 characters').pipe(z.string().min(1, 'must be 1 to 100 characters'))
    .refine((s) => s.trim().length > 0, 'must not be blank'),
  role: Role.default('editor'),
  max_patterns: z.number().int().min(0).max(1_000_000_000).optional(),
  expires_at: DateTime.optional(),
  /** (+) Another project of the caller's tenant (owner keys only); created when missing. */
  project_id: ProjectId.optional(),
}).strict();
export type CreateKeyRequest = z.input<typeof CreateKeyRequest>;
export type CreateKeyInput = z.output<typeof CreateKeyRequest>;

/** A key as listed: no secret, no digest. */
export const KeyInfo = z.object({
  key_id: KeyId,
  name: z.string(),
  role: Role,
  prefix: z.string(),
  project_id: z.string(),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  max_patterns: z.number().int().nullable(),
  rotated_from: z.string().nullable(),
  status: z.enum(['active', 'revoked', 'expired']),
});
export type KeyInfo = z.infer<typeof KeyInfo>;

/** POST /v1/keys and POST /v1/keys/{id}/rotate: the key plus its secret, shown once. */
export const IssuedKey = KeyInfo.extend({ secret: z.string() });
export type IssuedKey = z.infer<typeof IssuedKey>;

export const KeyListResponse = z.object({ keys: z.array(KeyInfo), count: z.number().int() });
export type KeyListResponse = z.infer<typeof KeyListResponse>;

export const KeyParams = z.object({ id: KeyId });

/**
 * (+) GET /v1/keys?project_id=P lists the keys of another project of the caller's tenant;
 * `all_projects=true` lists every project's. Both are for owner keys only.
 */
export const KeyListQuery = z.object({
  project_id: ProjectId.optional(),
  all_projects: queryBool.optional(),
}).strict().refine((q) => !(q.all_projects === true && q.project_id !== undefined), {
  message: 'give project_id or all_projects=true, not both',
  path: ['all_projects'],
});
export type KeyListQuery = z.input<typeof KeyListQuery>;
