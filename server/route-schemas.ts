import * as analytics from '../src/contracts/analytics.js';
import * as billing from '../src/contracts/billing.js';
import * as evaluations from '../src/contracts/evaluations.js';
import * as governance from '../src/contracts/governance.js';
import * as health from '../src/contracts/health.js';
import * as jobs from '../src/contracts/jobs.js';
import * as keys from '../src/contracts/keys.js';
import * as llm from '../src/contracts/llm.js';
import * as mcp from '../src/contracts/mcp.js';
import * as memory from '../src/contracts/memory.js';
import * as patterns from '../src/contracts/patterns.js';
import type { ContractModules, RouteEntry, SchemasOf } from '../src/contracts/routes.js';

/** Every contract module the route table names, loaded: the server registers all routes at start. */
const MODULES: ContractModules = { analytics, billing, evaluations, governance, health, jobs, keys, llm, mcp, memory, patterns };

/** A route table entry's schemas, at once. */
export function schemasNow<E extends RouteEntry>(entry: E): SchemasOf<E> {
  return (entry.schemas as (m: unknown) => SchemasOf<E>)(MODULES[entry.module]);
}
