import { ApiError, client } from './api.js';

/**
 * What the key in use may do, as far as the console shows it: admin screens appear only when
 * the server itself accepts the key for an admin read (GET /v1/keys). The server still checks
 * every request; this only keeps buttons a key cannot use out of the way.
 */
export interface Abilities {
  admin: boolean;
  /** DB auth mode: keys can be managed (GET /v1/keys answered 200). */
  keys: boolean;
  /** The server's answer when keys cannot be managed here (404 outside DB auth mode). */
  keysNote: string | null;
}

export async function probeAbilities(): Promise<Abilities> {
  try {
    await client.keys.list();
    return { admin: true, keys: true, keysNote: null };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return { admin: true, keys: false, keysNote: err.detail };
    if (err instanceof ApiError && (err.status === 403 || err.status === 401)) return { admin: false, keys: false, keysNote: null };
    throw err;
  }
}
