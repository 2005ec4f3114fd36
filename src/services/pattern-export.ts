import type { PatternExportInput } from '../contracts/patterns.js';
import { browseFilter } from '../core/permissions.js';
import type { Role, Scope } from '../core/types.js';
import type { RequestContext } from './audit.js';
import type { ServiceDeps } from './deps.js';
import { exportNdjson } from './governance.js';

/**
 * (+) GET /v1/patterns/export: every pattern the listing with these filters would show the
 * caller, as the governance export's NDJSON lines, in one streamed response (a console or
 * script exports any number of patterns with one request, within the default rate limits).
 * Browsing rules apply: a reader's export leaves out what a reader may not list.
 */
export function exportListing(deps: ServiceDeps, scope: Scope, role: Role, input: PatternExportInput, ctx: RequestContext): AsyncGenerator<string> {
  return exportNdjson(deps, scope, browseFilter(role, input), ctx);
}
