import { ApiError, client } from './api.js';
import type { CLASSIFICATIONS } from './types.js';

/**
 * What the key in use may do, as far as the console shows it: the server's own answer for this
 * key (GET /v1/access: role, permissions, browsable classifications), and whether keys can be
 * managed here (GET /v1/keys). The server still checks every request; this only keeps controls
 * a key cannot use out of the way.
 */
export interface Abilities {
  admin: boolean;
  /** DB auth mode: keys can be managed (GET /v1/keys answered 200). */
  keys: boolean;
  /** The server's answer when keys cannot be managed here (404 outside DB auth mode). */
  keysNote: string | null;
  /** Permission names the key holds (src/core/permissions.ts). */
  permissions: ReadonlySet<string>;
  /** The classifications the key may browse: the listing never shows others. */
  classifications: readonly (typeof CLASSIFICATIONS)[number][];
}

/** Whether the key holds a permission of the server's table (e.g. `skills:register`). */
export const allows = (can: Abilities, permission: string): boolean => can.permissions.has(permission);

/** Whether keys can be managed here: only asked of a key that may list them (no refused request on load). */
async function probeKeys(mayList: boolean): Promise<Pick<Abilities, 'admin' | 'keys' | 'keysNote'>> {
  if (!mayList) return { admin: false, keys: false, keysNote: null };
  try {
    await client.keys.list();
    return { admin: true, keys: true, keysNote: null };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return { admin: true, keys: false, keysNote: err.detail };
    if (err instanceof ApiError && (err.status === 403 || err.status === 401)) return { admin: false, keys: false, keysNote: null };
    throw err;
  }
}

export async function probeAbilities(): Promise<Abilities> {
  const access = await client.keys.access();
  const permissions = new Set(access.permissions);
  return { ...(await probeKeys(permissions.has('keys:list'))), permissions, classifications: access.classifications };
}
