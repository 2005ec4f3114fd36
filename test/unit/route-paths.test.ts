import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { routes } from '../../src/contracts/routes.js';
import { pathLiterals, pathLiteralsUnder } from '../support/path-literals.js';

/**
 * A route's method and path are written once, in the route table (src/contracts/routes.ts):
 * the server registers its entries, the client and the console call them. Anywhere else a
 * spelt-out path is a second copy that can drift.
 */
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CALLERS_AND_ROUTES = ['src/client', 'console/src', 'commands', 'server/routes', 'server/mcp'];

describe('API paths are written once', () => {
  it('no client, console, command or route file spells out an API path', () => {
    expect(pathLiteralsUnder(ROOT, CALLERS_AND_ROUTES)).toEqual([]);
  });

  it('finds a path in a string, a template and JSX text, and not in a comment', () => {
    const found = pathLiterals('fixture.tsx', [
      '// GET /v1/jobs in a comment is documentation',
      "const a = get('/v1/metrics');",
      'const b = get(`/v1/patterns/${key}/history`);',
      'const c = <p>Read with GET /v1/feedback.</p>;',
      'const d = routes.metrics.path;',
    ].join('\n'));
    expect(found).toEqual([
      'fixture.tsx:2: /v1/metrics',
      'fixture.tsx:3: /v1/patterns/',
      'fixture.tsx:4: Read with GET /v1/feedback.',
    ]);
  });

  it('every entry of the table has its own method and path', () => {
    const seen = Object.values(routes).map((entry) => `${entry.method} ${entry.path}`);
    expect(new Set(seen).size).toBe(seen.length);
  });
});
