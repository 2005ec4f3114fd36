/**
 * (+) GET /v1/access: the calling key's role, its permissions and the classifications it may
 * browse, read from the one permission table (docs/behavior.md "Web console"), for any key.
 */
import { describe, expect, it } from 'vitest';
import { AccessResponse } from '../../src/contracts/keys.js';
import { routes } from '../../src/contracts/routes.js';
import { permissionsOf } from '../../src/core/permissions.js';
import { serversClosedAfterEach } from './helpers.js';

const start = serversClosedAfterEach();
const KEY = 'access-test-key-0123456789abcdef';

describe('GET /v1/access', () => {
  it.each(['reader', 'editor', 'owner'] as const)('answers a %s key its role, permissions and browsable classifications', async (role) => {
    const t = await start({ SERVICE_AUTH_MODE: 'env', SERVICE_API_KEYS: KEY, SERVICE_ENV_AUTH_ROLE: role });
    const res = await t.call(routes.access.method, routes.access.path, undefined, { authorization: `Bearer ${KEY}` });
    expect(res.statusCode).toBe(200);
    const body = AccessResponse.parse(res.json());
    expect(body.role).toBe(role);
    expect(body.permissions).toEqual(permissionsOf(role));
    expect(body.classifications).toEqual(role === 'reader' ? ['public', 'internal'] : ['public', 'internal', 'confidential']);
  });

  it('needs a key like every other route', async () => {
    const t = await start({ SERVICE_AUTH_MODE: 'env', SERVICE_API_KEYS: KEY });
    expect((await t.call(routes.access.method, routes.access.path)).statusCode).toBe(401);
  });
});
