import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { NotFoundError } from '../../src/core/errors.js';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';

/**
 * The console's Content-Security-Policy: its own scripts and styles only (no inline code, no
 * eval), API calls to this origin only, never framed. The console is static files that call
 * the public REST API with the user's key; nothing here reads a key or a cookie.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** Asset names as the console build writes them (app-<hash>.js): no path, no leading dot. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/**
 * dist/console, found from this file whether it runs compiled (dist/server/routes) or from
 * source (server/routes, tests): the folder that holds dist/ is the package root.
 */
export function consoleDirectory(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const inDist = here.lastIndexOf(`${sep}dist${sep}`);
  const root = inDist >= 0 ? here.slice(0, inDist) : join(here, '..', '..');
  return join(root, 'dist', 'console');
}

function secureHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('cross-origin-opener-policy', 'same-origin');
}

/**
 * GET /console (+) and its assets, registered unless SERVICE_CONSOLE=false. Public: the page
 * holds no data, every screen asks the API with the key the user types in. Assets have hashed
 * names, so they are cached for good; the page itself is revalidated.
 */
export function consoleRoutes(app: FastifyInstance, options: { enabled: boolean; directory?: string }): void {
  if (!options.enabled) return;
  const directory = options.directory ?? consoleDirectory();
  const notBuilt = () => new NotFoundError('the console is not built: run `npm run build`');

  defineRoute(app, routes.consolePage, {
    public: true, rateClass: 'exempt', errors: [404],
    tag: 'health', summary: '(+) The web console (HTML; on unless SERVICE_CONSOLE=false). It calls this API with the key typed into it.',
    handler: async (_input, _request, reply) => {
      const index = join(directory, 'index.html');
      if (!existsSync(index)) throw notBuilt();
      const html = await readFile(index);
      return secureHeaders(reply).type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(html);
    },
  });

  defineRoute(app, routes.consoleAsset, {
    public: true, rateClass: 'exempt', input: 'manual',
    errors: [404],
    tag: 'health', summary: '(+) A script or style sheet of the web console.',
    handler: async (_input, request, reply) => {
      // Checked by hand: every bad name is the same 404, whatever is wrong with it.
      const { file } = request.params as { file: string };
      const type = CONTENT_TYPES[file.slice(file.lastIndexOf('.'))];
      if (!ASSET_NAME.test(file) || !type) throw new NotFoundError('no such console asset');
      let body: Buffer;
      try {
        body = await readFile(join(directory, 'assets', file));
      } catch {
        throw new NotFoundError('no such console asset');
      }
      return secureHeaders(reply).type(type).header('cache-control', 'public, max-age=31536000, immutable').send(body);
    },
  });
}
