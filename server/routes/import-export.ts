import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { queryBool } from '../../src/contracts/common.js';
import { ImportRequest } from '../../src/contracts/memory.js';
import { splitExportLines } from '../../src/core/export-lines.js';
import { parseNdjsonLines } from '../../src/core/reference-records.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { exportRecords, importRecords } from '../../src/services/import-export.js';
import { authed, requestContext } from '../context.js';
import { routes } from '../../src/contracts/routes.js';
import { defineRoute } from '../define-route.js';
import { parseWith } from '../http.js';
import { acceptAsync, wantsAsync } from '../async.js';
import { decodeUtf8Body } from '../utf8-body.js';

const NDJSON_TYPES = ['application/x-ndjson', 'application/ndjson', 'application/jsonl'];
/** With an NDJSON body the body is the records alone; `overwrite` comes in the query string. */
const NdjsonImportQuery = z.object({ overwrite: queryBool.default(false) }).strict();

/** GET /v1/export and POST /v1/import (the JSON form; NDJSON export lives with governance). */
export function importExportRoutes(app: FastifyInstance, deps: ServiceDeps): void {
  defineRoute(app, routes.exportAll, {
    permission: 'export', tag: 'import-export', summary: 'Every pattern of the scope with its governance metadata (no vectors).',
    handler: async (_input, request) => {
      await deps.billing?.requireFeature(authed(request).scope.tenant_id, 'governance_export');
      return exportRecords(deps, authed(request).scope, requestContext(request));
    },
  });

  // Import also takes an NDJSON body (one record a line, e.g. the governance export). The
  // parser lives in this route's own context, so every other route still takes JSON only.
  void app.register(async (scoped) => {
    scoped.addContentTypeParser(NDJSON_TYPES, { parseAs: 'buffer' }, (_request, body, done) => {
      try {
        done(null, { ndjson: parseNdjsonLines(decodeUtf8Body(body as Buffer)) });
      } catch (err) {
        done(err as Error, undefined);
      }
    });

    // Manual input: the body is JSON or NDJSON, each read with its own schema.
    defineRoute(scoped, routes.importRecords, {
      permission: 'import', input: 'manual', async: true,
      tag: 'import-export', summary: 'Import records in the export shape; existing keys are skipped unless `overwrite`.',
      handler: (_input, request, reply) => {
        const body = request.body as { ndjson?: unknown[] } | undefined;
        const input = isNdjson(request.headers['content-type'])
          ? parseWith(ImportRequest, { ...ndjsonImportFields(body?.ndjson ?? []), ...parseWith(NdjsonImportQuery, request.query, 'query') })
          : parseWith(ImportRequest, request.body);
        if (wantsAsync(request)) return acceptAsync(request, reply, deps, 'import', input);
        return importRecords(deps, authed(request).scope, input, requestContext(request));
      },
    });
  });
}

/** An NDJSON body's records, and (+) the export's outcomes and evaluation run lines when it has some. */
function ndjsonImportFields(lines: unknown[]): { records: unknown[]; outcomes?: unknown[]; evaluation_runs?: unknown[] } {
  const { records, outcomes, evaluation_runs } = splitExportLines(lines);
  return { records, ...(outcomes.length > 0 ? { outcomes } : {}), ...(evaluation_runs.length > 0 ? { evaluation_runs } : {}) };
}

function isNdjson(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return NDJSON_TYPES.includes(type);
}
