import { CLASSIFICATIONS, type Classification, type PatternFilter, type Role } from './types.js';

/**
 * The one permission table (docs/behavior.md "Auth and scope"): each permission names the lowest
 * role that holds it; roles nest reader ⊂ editor ⊂ admin ⊂ owner. Routes declare the
 * permission they need; the permission-matrix test is generated from this table.
 */
export const PERMISSIONS = {
  // reader
  recall: 'reader',
  'feedback:read': 'reader',
  metrics: 'reader',
  health: 'reader',
  'skills:search': 'reader',
  'jobs:list': 'reader',
  'jobs:read': 'reader',
  'analytics:read': 'reader',
  'evaluations:read': 'reader',
  // editor
  'patterns:confidential': 'editor',
  learn: 'editor',
  import: 'editor',
  evaluate: 'editor',
  compose: 'editor',
  evolve: 'editor',
  'analyze-failures': 'editor',
  aging: 'editor',
  'feedback:decay': 'editor',
  'skills:register': 'editor',
  'jobs:cancel': 'editor',
  'analytics:rollup': 'editor',
  // admin
  'patterns:delete': 'admin',
  export: 'admin',
  'keys:create': 'admin',
  'keys:list': 'admin',
  'keys:revoke': 'admin',
  'keys:rotate': 'admin',
  'governance:read': 'admin',
  'governance:write': 'admin',
  'governance:admin': 'admin',
  'governance:delete': 'admin',
  billing: 'admin',
  'billing:manage': 'admin',
  // owner
  'tenants:delete': 'owner',
} as const satisfies Record<string, Role>;

export type Permission = keyof typeof PERMISSIONS;

const RANK: Record<Role, number> = { reader: 0, editor: 1, admin: 2, owner: 3 };

export function roleAtLeast(role: Role, needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

export function hasPermission(role: Role, permission: Permission): boolean {
  return roleAtLeast(role, PERMISSIONS[permission]);
}

/** Every permission the role holds, sorted (GET /v1/access). */
export function permissionsOf(role: Role): Permission[] {
  return (Object.keys(PERMISSIONS) as Permission[]).filter((p) => hasPermission(role, p)).sort();
}

/** A key may create keys up to its own role; only owners create owners. */
export function canGrantRole(creator: Role, requested: Role): boolean {
  return roleAtLeast(creator, requested);
}

/**
 * The classifications a role may browse (docs/behavior.md "Auth and scope", pattern reads): a
 * `confidential` pattern needs `patterns:confidential`. Recall and skills search are not
 * browsing and ignore this.
 */
export function readableClassifications(role: Role): readonly Classification[] {
  return hasPermission(role, 'patterns:confidential') ? CLASSIFICATIONS : CLASSIFICATIONS.filter((c) => c !== 'confidential');
}

/**
 * The caller's filter narrowed to what the role may browse: the one place the rule becomes a
 * storage filter (listing, export, single reads alike), so every read applies it inside the
 * storage query and none after it.
 */
export function browseFilter(role: Role, filter: PatternFilter = {}): PatternFilter {
  const readable = readableClassifications(role);
  if (readable.length === CLASSIFICATIONS.length) return filter;
  const asked = filter.classifications ?? CLASSIFICATIONS;
  return { ...filter, classifications: asked.filter((c) => readable.includes(c)) };
}
