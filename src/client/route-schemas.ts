import type { z } from 'zod';
import type { ContractModules, RouteEntry, SchemasOf } from '../contracts/routes.js';
import type { SchemaLoader } from './wire.js';

/**
 * The contract modules of the route table, each loaded on first use: a process that never
 * checks an answer with zod (the CLI's shape check) never loads one.
 */
const LOADERS: { [M in keyof ContractModules]: () => Promise<ContractModules[M]> } = {
  analytics: () => import('../contracts/analytics.js'),
  billing: () => import('../contracts/billing.js'),
  evaluations: () => import('../contracts/evaluations.js'),
  governance: () => import('../contracts/governance.js'),
  health: () => import('../contracts/health.js'),
  jobs: () => import('../contracts/jobs.js'),
  keys: () => import('../contracts/keys.js'),
  llm: () => import('../contracts/llm.js'),
  mcp: () => import('../contracts/mcp.js'),
  memory: () => import('../contracts/memory.js'),
  patterns: () => import('../contracts/patterns.js'),
};

/** An entry's schemas, loading its contract module first. @internal */
export async function schemasOf<E extends RouteEntry>(entry: E): Promise<SchemasOf<E>> {
  const module = await LOADERS[entry.module]();
  return (entry.schemas as (m: unknown) => SchemasOf<E>)(module);
}

/** The JSON success schema of an entry (a loader, as RequestOptions takes it). @internal */
export function responseOf(entry: RouteEntry): () => Promise<z.ZodType> {
  return async () => {
    const { response } = await schemasOf(entry);
    if ('text' in response) throw new Error(`${entry.method} ${entry.path} answers ${response.text}, not JSON: stream it`);
    return response;
  };
}

/** The zod contracts, each module loaded when an answer first needs it (ServiceClient's checks). @internal */
export const CONTRACTS: SchemaLoader = {
  response: responseOf,
  jobAccepted: async () => (await LOADERS.jobs()).JobAccepted,
  ndjsonExportRecord: async () => (await LOADERS.governance()).NdjsonExportRecord,
};
