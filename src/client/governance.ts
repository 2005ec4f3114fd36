import type {
  ClassifyResponse, DeletionResultResponse as DeletionResult, NdjsonExportRecord,
} from '../contracts/governance.js';
import type { JobAccepted } from '../contracts/jobs.js';
import { isNonRecordLine } from '../core/export-lines.js';
import type { Classification } from '../core/types.js';
import { ProtocolError } from './errors.js';
import { RetentionClient } from './governance-retention.js';
import { routes, type CallInput } from '../contracts/routes.js';
import type { ApiClient } from './api-client.js';

export interface DeletionOptions {
  /** Send `Prefer: respond-async`: the answer is a job to poll instead of the result. */
  async?: boolean;
  /** Only count what would be deleted (and revoked); nothing changes. */
  dryRun?: boolean;
}

export interface NdjsonExportOptions {
  /** Only these classifications (all when absent). */
  classifications?: Classification[];
}

/**
 * Typed calls of the governance endpoints (docs/behavior.md "Governance"): the NDJSON export,
 * classification, deletions, and retention as `governance.retention`.
 */
export class GovernanceClient {
  /** The retention policy: get, set, apply. */
  readonly retention: RetentionClient;

  constructor(private readonly client: ApiClient) {
    this.retention = new RetentionClient(client);
  }

  /**
   * GET /v1/governance/export as raw NDJSON chunks, for writing straight to a file; `filename`
   * is the server's suggested download name.
   */
  async exportNdjsonRaw(options: NdjsonExportOptions = {}): Promise<{ filename: string | null; body: AsyncIterable<Uint8Array> & { destroy(): void } }> {
    const query = options.classifications?.length ? { classification: options.classifications.join(',') } : undefined;
    const { headers, body } = await this.client.callStream(routes.governanceExport, { query }, 'application/x-ndjson');
    const filename = /filename="([^"]+)"/.exec(headers['content-disposition'] ?? '')?.[1] ?? null;
    return { filename, body };
  }

  /** GET /v1/governance/export, one validated record per line, read as the stream arrives. */
  async *exportNdjson(options: NdjsonExportOptions = {}): AsyncGenerator<NdjsonExportRecord> {
    const { body } = await this.exportNdjsonRaw(options);
    try {
      let n = 0;
      for await (const line of linesOf(body)) {
        n++;
        if (line.trim() === '') continue;
        const value = JSON.parse(line) as unknown;
        // (+) A recall's outcomes line (docs/behavior.md "Outcomes") or an evaluation run's line
        // (docs/behavior.md "Evaluation runs"): not pattern records; exportNdjsonRaw has them.
        if (isNonRecordLine(value)) continue;
        const parsed = (await this.client.schemas.ndjsonExportRecord()).safeParse(value) as { success: boolean; data: NdjsonExportRecord };
        if (!parsed.success) throw new ProtocolError(routes.governanceExport.path, `line ${n} of the NDJSON export is not an export record`);
        yield parsed.data;
      }
    } finally {
      body.destroy();
    }
  }

  /** PUT /v1/governance/patterns/{key}/classify → the updated pattern. */
  classify(key: string, classification: Classification): Promise<ClassifyResponse> {
    return this.client.call(routes.classify, { params: { key }, body: { classification } });
  }

  deleteProject(projectId: string, options?: DeletionOptions & { async?: false }): Promise<DeletionResult>;
  deleteProject(projectId: string, options: DeletionOptions & { async: true }): Promise<JobAccepted>;
  deleteProject(projectId: string, options: DeletionOptions = {}): Promise<DeletionResult | JobAccepted> {
    return this.deletion(routes.deleteProject, { params: { project_id: projectId }, query: dryRunQuery(options) }, options);
  }

  deleteTenant(tenantId: string, options?: DeletionOptions & { async?: false }): Promise<DeletionResult>;
  deleteTenant(tenantId: string, options: DeletionOptions & { async: true }): Promise<JobAccepted>;
  deleteTenant(tenantId: string, options: DeletionOptions = {}): Promise<DeletionResult | JobAccepted> {
    return this.deletion(routes.deleteTenant, { params: { tenant_id: tenantId }, query: dryRunQuery(options) }, options);
  }

  /** POST /v1/governance/delete-scope: the caller's own scope; dryRun only counts. */
  deleteScope(options?: DeletionOptions & { async?: false }): Promise<DeletionResult>;
  deleteScope(options: DeletionOptions & { async: true }): Promise<JobAccepted>;
  deleteScope(options: DeletionOptions = {}): Promise<DeletionResult | JobAccepted> {
    return this.deletion(routes.deleteScope, { query: { dry_run: options.dryRun ?? false } }, options);
  }

  private deletion<E extends DeletionRoute>(entry: E, input: CallInput<E>, options: DeletionOptions): Promise<DeletionResult | JobAccepted> {
    return options.async ? this.client.callAsync(entry, input) : (this.client.call(entry, input) as Promise<DeletionResult>);
  }
}

type DeletionRoute = typeof routes.deleteProject | typeof routes.deleteTenant | typeof routes.deleteScope;

/** `?dry_run=true` only when asked, so a real deletion's URL stays the specification's. */
function dryRunQuery(options: DeletionOptions): Record<string, boolean> | undefined {
  return options.dryRun ? { dry_run: true } : undefined;
}

/**
 * The lines of a UTF-8 byte stream as they arrive (a line may span chunks; `\r\n` counts as
 * one break). Plain TextDecoder rather than node:readline: nothing to load, and it runs in a
 * browser too.
 */
async function* linesOf(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of chunks) {
    const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n');
    rest = parts.pop() ?? '';
    for (const part of parts) yield part.endsWith('\r') ? part.slice(0, -1) : part;
  }
  rest += decoder.decode();
  if (rest !== '') yield rest.endsWith('\r') ? rest.slice(0, -1) : rest;
}
