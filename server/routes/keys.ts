import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../src/core/errors.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { bootstrapOwnerKey, createKey, listKeys, revokeKey, rotateKey, type KeyDeps } from '../../src/services/keys.js';
import { authed, requestContext } from '../context.js';
import { routes, type RouteEntry, type RouteName } from '../../src/contracts/routes.js';
import { defineRoute, type RouteDefinition } from '../define-route.js';

/**
 * docs/behavior.md "Keys": bootstrap, create, list, revoke, rotate. They need DB auth mode. In the other
 * modes the same paths answer 404 `{detail}` saying so: there are no stored keys to manage
 * (env keys live in SERVICE_API_KEYS, OIDC identities at the provider). They still require
 * their permission first, so an unauthenticated caller learns nothing about the auth mode.
 */
export function keyRoutes(app: FastifyInstance, deps: ServiceDeps, authMode: string): void {
  // An authenticator injected in place of DB keys (tests) leaves no keys to manage either.
  const keyStore = authMode === 'db' ? deps.keyStore : null;
  if (keyStore === null) {
    const unavailable = async () => {
      throw new NotFoundError(
        `API keys need DB auth mode (SERVICE_AUTH_MODE=db, or auto with SERVICE_DATABASE_URL); this server uses ${authMode} auth`,
      );
    };
    // The same declarations, answering 404 before reading any input.
    for (const name of Object.keys(KEY_ROUTES) as (keyof typeof KEY_ROUTES)[]) {
      defineRoute(app, routes[name] as RouteEntry, { ...KEY_ROUTES[name], input: 'manual', handler: unavailable });
    }
    return;
  }

  const keyDeps: KeyDeps = { ...deps, keyStore };
  const caller = (request: Parameters<typeof authed>[0]) => {
    const { principal, scope } = authed(request);
    return { role: principal.role, scope, limits: { expires_at: principal.expires_at ?? null, max_patterns: principal.max_patterns } };
  };

  // No API key here: the bootstrap token in the body is the credential. Per-IP rate limits
  // apply as everywhere, which bounds token guessing.
  defineRoute(app, routes.bootstrapKey, {
    ...KEY_ROUTES.bootstrapKey,
    handler: ({ body }, request) => bootstrapOwnerKey(keyDeps, body.token, requestContext(request)),
  });

  defineRoute(app, routes.createKey, {
    ...KEY_ROUTES.createKey,
    handler: ({ body }, request) => createKey(keyDeps, caller(request), body, requestContext(request)),
  });

  defineRoute(app, routes.listKeys, {
    ...KEY_ROUTES.listKeys,
    handler: ({ query }, request) => listKeys(keyDeps, caller(request), query),
  });

  defineRoute(app, routes.revokeKey, {
    ...KEY_ROUTES.revokeKey,
    handler: ({ params }, request) => revokeKey(keyDeps, caller(request), params.id, requestContext(request)),
  });

  defineRoute(app, routes.rotateKey, {
    ...KEY_ROUTES.rotateKey,
    handler: ({ params }, request) => rotateKey(keyDeps, caller(request), params.id, requestContext(request)),
  });
}

/** The key routes' declarations, shared by the DB-auth handlers and the 404 stand-ins of other modes. */
const KEY_ROUTES = {
  bootstrapKey: {
    public: true, status: 201, errors: [404, 409],
    tag: 'keys', summary: 'Create the first owner key with the bootstrap token (no API key).',
  },
  createKey: {
    permission: 'keys:create', status: 201, errors: [404],
    tag: 'keys', summary: 'Create a key of at most the caller\'s role, expires_at and max_patterns (left out: inherited); the secret is shown once.',
  },
  listKeys: {
    permission: 'keys:list', errors: [404],
    tag: 'keys', summary: 'Keys of the current project (no secrets); (+) owner keys may name another project of the tenant (project_id) or ask for all (all_projects).',
  },
  revokeKey: {
    permission: 'keys:revoke', errors: [404, 409],
    tag: 'keys', summary: 'Revoke a key at once (owner keys: a key of any project of the tenant).',
  },
  rotateKey: {
    permission: 'keys:rotate', errors: [404],
    tag: 'keys', summary: 'Give a key a new secret; the old one is refused at once. Its limits are kept, tightened to the caller\'s (owner keys: any project of the tenant).',
  },
} as const satisfies Partial<Record<RouteName, Omit<RouteDefinition<RouteEntry>, 'handler'>>>;
