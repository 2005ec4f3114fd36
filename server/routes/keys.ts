import type { FastifyInstance } from 'fastify';
import { BootstrapRequest, CreateKeyRequest, KeyParams } from '../../src/contracts/keys.js';
import { NotFoundError } from '../../src/core/errors.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { bootstrapOwnerKey, createKey, listKeys, revokeKey, rotateKey, type KeyDeps } from '../../src/services/keys.js';
import { authed, requestContext } from '../context.js';
import { parseWith } from '../http.js';

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
    app.post('/v1/keys/bootstrap', { config: { public: true } }, unavailable);
    app.post('/v1/keys', { config: { permission: 'keys:create' } }, unavailable);
    app.get('/v1/keys', { config: { permission: 'keys:list' } }, unavailable);
    app.delete('/v1/keys/:id', { config: { permission: 'keys:revoke' } }, unavailable);
    app.post('/v1/keys/:id/rotate', { config: { permission: 'keys:rotate' } }, unavailable);
    return;
  }

  const keyDeps: KeyDeps = { ...deps, keyStore };
  const caller = (request: Parameters<typeof authed>[0]) => {
    const { principal, scope } = authed(request);
    return { role: principal.role, scope, limits: { expires_at: principal.expires_at ?? null, max_patterns: principal.max_patterns } };
  };

  // No API key here: the bootstrap token in the body is the credential. Per-IP rate limits
  // apply as everywhere, which bounds token guessing.
  app.post('/v1/keys/bootstrap', { config: { public: true } }, async (request, reply) => {
    const { token } = parseWith(BootstrapRequest, request.body);
    const created = await bootstrapOwnerKey(keyDeps, token, requestContext(request));
    return reply.status(201).send(created);
  });

  app.post('/v1/keys', { config: { permission: 'keys:create' } }, async (request, reply) => {
    const input = parseWith(CreateKeyRequest, request.body);
    const created = await createKey(keyDeps, caller(request), input, requestContext(request));
    return reply.status(201).send(created);
  });

  app.get('/v1/keys', { config: { permission: 'keys:list' } }, async (request) => {
    return listKeys(keyDeps, authed(request).scope);
  });

  app.delete('/v1/keys/:id', { config: { permission: 'keys:revoke' } }, async (request) => {
    const { id } = parseWith(KeyParams, request.params, 'path');
    return revokeKey(keyDeps, caller(request), id, requestContext(request));
  });

  app.post('/v1/keys/:id/rotate', { config: { permission: 'keys:rotate' } }, async (request) => {
    const { id } = parseWith(KeyParams, request.params, 'path');
    return rotateKey(keyDeps, caller(request), id, requestContext(request));
  });
}
