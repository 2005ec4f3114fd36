import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildServer } from '../../server/app.js';
import type { AuthRequest, Authenticator } from '../../server/auth/authenticator.js';
import type { Principal } from '../../server/context.js';
import { createApp, type App } from '../../src/app.js';
import type { Env } from '../../src/config/index.js';
import { UnauthenticatedError } from '../../src/core/errors.js';
import { ROLES, type Role } from '../../src/core/types.js';
import type { Clock } from '../../src/ports/clock.js';
import type { Storage } from '../../src/ports/storage.js';
import { testConfig } from './helpers.js';

/**
 * Principals straight from the bearer token `<kind>.<role>.<tenant>.<project or *>`, e.g.
 * `db.admin.acme.web` (a DB-mode key bound to acme/web) or `env.owner.default.*` (an env key;
 * X-Project-Id picks the project). Real key checks are tested elsewhere; these tests are about
 * what analytics and governance do for a given principal, including its auth kind.
 */
export class TokenPrincipalAuthenticator implements Authenticator {
  readonly mode = 'db' as const;
  readonly description = 'test principals from bearer tokens';

  async authenticate(request: AuthRequest): Promise<Principal> {
    const token = request.authorization?.replace(/^Bearer /, '') ?? '';
    const [kind, role, tenant, project] = token.split('.');
    if (!['db', 'env', 'dev', 'oidc'].includes(kind) || !(ROLES as readonly string[]).includes(role) || !tenant || !project) {
      throw new UnauthenticatedError('invalid API key');
    }
    return {
      kind: kind as Principal['kind'],
      actor: token,
      role: role as Role,
      tenant_id: tenant,
      project_id: project === '*' ? null : project,
      rateKey: token,
      max_patterns: null,
    };
  }
}

export interface GovServer {
  server: FastifyInstance;
  app: App;
  call(method: InjectOptions['method'], url: string, token: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** A server over JSON storage in a temp dir (or the given storage), the offline model, and `clock`. */
export async function startGovServer(clock: Clock, opts: { storage?: Storage; env?: Env } = {}): Promise<GovServer> {
  const dataPath = await mkdtemp(join(tmpdir(), 'svc-gov-'));
  const config = testConfig(dataPath, {
    // Many calls from one test IP and key; the limits are not under test here.
    SERVICE_RATE_LIMIT_DEFAULT: '100000',
    SERVICE_RATE_LIMIT_PER_KEY: '100000',
    ...opts.env,
  });
  const app = await createApp(config, { clock, ...(opts.storage ? { storage: opts.storage } : {}) });
  const server = await buildServer(app, { authenticator: new TokenPrincipalAuthenticator(), checkResponses: true });
  return {
    server,
    app,
    call: (method, url, token, body, headers = {}) =>
      server.inject({
        method,
        url,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        payload: body === undefined ? undefined : JSON.stringify(body),
      }),
    async close() {
      await server.close();
      await app.close();
      await rm(dataPath, { recursive: true, force: true });
    },
  };
}
