import { UnauthenticatedError } from '../../src/core/errors.js';
import type { Clock } from '../../src/ports/clock.js';
import type { KeyRepository } from '../../src/ports/keys.js';
import { API_KEY_FORMAT, digestsEqual, hashApiKey } from '../../src/services/api-key-secrets.js';
import type { Principal } from '../context.js';
import type { AuthRequest, Authenticator } from './authenticator.js';
import { bearerToken } from './secrets.js';

/**
 * DB auth mode: multi-tenant keys with roles, looked up by the SHA-256 of the presented secret.
 *
 * No cache, on purpose. A revoked, rotated-away or expired key must be refused at once by
 * every server process, and a per-process cache would keep honouring it until its entry
 * expired (no cross-process invalidation exists without adding one). The lookup is one
 * unique-index probe on a 32-byte digest joined with its project row: well under a
 * millisecond next to the embedding and search work of the request itself.
 */
export class DbKeyAuthenticator implements Authenticator {
  readonly mode = 'db' as const;
  readonly description = 'multi-tenant API keys with roles (PostgreSQL)';

  constructor(private readonly keys: KeyRepository, private readonly clock: Clock) {}

  async authenticate(request: AuthRequest): Promise<Principal> {
    const token = bearerToken(request.authorization);
    if (token === null) throw new UnauthenticatedError('missing API key: send Authorization: Bearer <key>');
    // Anything not shaped like our keys cannot match: refuse without a database round trip.
    if (!API_KEY_FORMAT.test(token)) throw new UnauthenticatedError('invalid API key');

    const digest = hashApiKey(token);
    const key = await this.keys.findByHash(digest);
    // The lookup went by digest (which tells an attacker nothing about the secret); the final
    // comparison is constant-time all the same.
    if (key === null || !digestsEqual(key.hash, digest)) throw new UnauthenticatedError('invalid API key');
    if (key.revoked_at !== null) throw new UnauthenticatedError('API key revoked');
    if (key.expires_at !== null && Date.parse(key.expires_at) <= this.clock.now().getTime()) {
      throw new UnauthenticatedError('API key expired');
    }
    return {
      kind: 'db',
      actor: key.key_id,
      role: key.role,
      tenant_id: key.tenant_id,
      project_id: key.project_id,
      rateKey: `db:${key.key_id}`,
      // A key without its own quota inherits its project's.
      max_patterns: key.max_patterns ?? key.project_max_patterns,
      expires_at: key.expires_at,
    };
  }
}
