import type { DeepHealthResponse, HealthResponse, VersionResponse } from '../contracts/health.js';
import type { JobAccepted } from '../contracts/jobs.js';
import type {
  AgingResponse, AnyImportRecord, DeletePatternResponse, ExportRecord, ExportResponse, ImportResponse, LearnRequest, LearnResponse,
  MetricsResponse, OutcomeRequest, TracedOutcomesLine, EvaluationRunLine, OutcomeResponse, PatternHistoryResponse, PatternOutcomesResponse, RecallGetQuery, RecallRequest, RecallResponse, SkillsRegisterRequest, SkillsRegisterResponse,
  SkillsSearchRequest, SkillsSearchResponse,
} from '../contracts/memory.js';
import type { PatternExportQuery, PatternListQuery, PatternListResponse } from '../contracts/patterns.js';
import { pathOf, routes, type CallInput, type CallOutput, type RouteEntry } from '../contracts/routes.js';
import { apiErrorFor } from './api-errors.js';
import { describeErrorBody, type ApiError } from './errors.js';
import { AnalyticsClient } from './analytics.js';
import { BillingClient } from './billing.js';
import { EvaluationsClient } from './evaluations.js';
import { GovernanceClient } from './governance.js';
import { sendSplittingTooLarge } from './import-chunks.js';
import { JobsClient } from './jobs.js';
import { KeysClient } from './keys.js';
import { LlmClient } from './llm.js';
import type { z } from 'zod';
import type { HttpMethod, RequestOptions, RequestTransport, SchemaLoader, StreamedResponse, StreamOptions } from './wire.js';

/** The area clients, each made on first use. */
interface Areas {
  jobs: JobsClient;
  keys: KeysClient;
  llm: LlmClient;
  analytics: AnalyticsClient;
  governance: GovernanceClient;
  billing: BillingClient;
  evaluations: EvaluationsClient;
}

export interface ImportAllOptions {
  overwrite?: boolean;
  /** Records per request (the spec allows at most 10,000). */
  chunkSize?: number;
  /** Called after each accepted request with the running totals. */
  onProgress?: (sent: number, total: number) => void;
}

/** How a call differs from the plain one (all optional). */
export interface CallOptions {
  headers?: Record<string, string>;
  /** Top-level fields of the answer, for the transport's shape check (see RequestOptions.shape). */
  shape?: string[];
  /** Non-2xx statuses whose body is still the route's answer (deep health's 503). */
  acceptStatuses?: number[];
}

/** A call's arguments: the input may be left out when the entry declares nothing required. */
type CallArgs<E> = object extends CallInput<E> ? [input?: CallInput<E>, options?: CallOptions] : [input: CallInput<E>, options?: CallOptions];

interface SentInput {
  params?: Record<string, unknown>;
  query?: Record<string, string | number | boolean | null | undefined>;
  body?: unknown;
}

const RECALL_SHAPE = ['matches', 'has_more', 'next_offset'];

/**
 * Typed client of the service's HTTP API over any transport (HTTP in Node: ServiceClient; the
 * browser's fetch: the web console). Every endpoint is an entry of the route table
 * (src/contracts/routes.ts) called through `call`, its answer checked with the entry's own
 * contract. Memory, skills and health calls are methods here; every other area is a property
 * (`client.jobs`, `client.keys`, `client.llm`, `client.analytics`, `client.governance` with
 * `.retention`, `client.billing`).
 */
export class ApiClient {
  private areas: Partial<Areas> = {};

  /** `schemas`: the contracts answers are checked with (route-schemas.ts CONTRACTS), or UNCHECKED. */
  constructor(protected readonly transport: RequestTransport, readonly schemas: SchemaLoader) {}

  /**
   * Calls a route of the table with its params, query and body; the answer is checked with the
   * entry's response contract. Throws ApiError / TransportError / ProtocolError.
   * @internal The typed methods are the public API; this is what they are made of.
   */
  call<E extends RouteEntry>(entry: E, ...[input, options]: CallArgs<E>): Promise<CallOutput<E>> {
    const sent = (input ?? {}) as SentInput;
    return this.transport.request(entry.method, pathOf(entry, sent.params), {
      body: sent.body, query: sent.query, ...options, schema: this.schemas.response(entry),
    }) as Promise<CallOutput<E>>;
  }

  /**
   * Calls an operation of the table with `Prefer: respond-async`: 202 `{job_id, status: 'pending'}`.
   * @internal
   */
  callAsync<E extends RouteEntry>(entry: E, ...[input, options]: CallArgs<E>): Promise<JobAccepted> {
    const sent = (input ?? {}) as SentInput;
    return this.transport.request(entry.method, pathOf(entry, sent.params), {
      body: sent.body, query: sent.query, ...options, headers: { ...options?.headers, prefer: 'respond-async' }, schema: () => this.schemas.jobAccepted(),
    }) as Promise<JobAccepted>;
  }

  /**
   * A streamed GET of the table (the NDJSON export): headers, then the body chunk by chunk.
   * @internal
   */
  callStream<E extends RouteEntry>(entry: E, input: CallInput<E>, accept: string): Promise<StreamedResponse> {
    const sent = input as SentInput;
    return this.stream(pathOf(entry, sent.params), { query: sent.query, accept });
  }

  /** Background jobs: submit, read, list, cancel, wait (docs/behavior.md "Jobs"). */
  get jobs(): JobsClient {
    return (this.areas.jobs ??= new JobsClient(this));
  }

  /** API keys (DB auth mode): bootstrap, create, list, revoke, rotate. */
  get keys(): KeysClient {
    return (this.areas.keys ??= new KeysClient(this));
  }

  /** Evaluate, compose, evolve, analyze failures and the feedback store. */
  get llm(): LlmClient {
    return (this.areas.llm ??= new LlmClient(this));
  }

  /** (+) Evaluation runs: start, finish, bless, list, read, compare. */
  get evaluations(): EvaluationsClient {
    return (this.areas.evaluations ??= new EvaluationsClient(this));
  }

  /** ROI rollups and raw events. */
  get analytics(): AnalyticsClient {
    return (this.areas.analytics ??= new AnalyticsClient(this));
  }

  /** Export, classification, deletions and `governance.retention`. */
  get governance(): GovernanceClient {
    return (this.areas.governance ??= new GovernanceClient(this));
  }

  /** Plan status, checkout, portal and overage settings. */
  get billing(): BillingClient {
    return (this.areas.billing ??= new BillingClient(this));
  }

  /** Generic call of any path, answer parsed with `schema` (endpoints of the table have typed methods). */
  request<S extends z.ZodType>(method: HttpMethod, path: string, options: RequestOptions<S>): Promise<z.infer<S>> {
    return this.transport.request(method, path, options);
  }

  /** A streamed GET of any path (e.g. the NDJSON export): headers, then the body chunk by chunk. */
  stream(path: string, options: StreamOptions): Promise<StreamedResponse> {
    if (!this.transport.stream) throw new Error('this client\'s transport cannot stream');
    return this.transport.stream(path, options);
  }

  learn(body: LearnRequest): Promise<LearnResponse> {
    return this.call(routes.learn, { body }, { shape: ['stored', 'pattern_count'] });
  }

  recall(body: RecallRequest): Promise<RecallResponse> {
    return this.call(routes.recall, { body }, { shape: RECALL_SHAPE });
  }

  /**
   * (+) Many recalls in one request (POST /v1/recall/batch, at most 100): each answer in its
   * place, or the ApiError POST /v1/recall would have thrown for that request.
   */
  async recallBatch(requests: RecallRequest[]): Promise<(RecallResponse | ApiError)[]> {
    const res = await this.call(routes.recallBatch, { body: { requests } }, { shape: ['results'] });
    return res.results.map((item) => ('result' in item
      ? item.result
      : apiErrorFor(item.error.status, describeErrorBody(item.error.status, item.error.body), item.error.body, null, null)));
  }

  /**
   * (+) GET /v1/patterns/export: every pattern the listing with these filters shows the caller,
   * as the NDJSON text of export records, in one request.
   */
  async exportPatterns(query: PatternExportQuery = {}): Promise<string> {
    const { body } = await this.callStream(routes.exportPatterns, { query }, 'application/x-ndjson');
    const decoder = new TextDecoder();
    let text = '';
    for await (const chunk of body) text += decoder.decode(chunk, { stream: true });
    return text + decoder.decode();
  }

  /** Read-only recall through the query string (no reuse side effects). */
  recallGet(query: RecallGetQuery): Promise<RecallResponse> {
    return this.call(routes.recallGet, { query }, { shape: RECALL_SHAPE });
  }

  metrics(): Promise<MetricsResponse> {
    return this.call(routes.metrics);
  }

  /** Decays and prunes; with `dry_run` (+) only reports what it would do. */
  aging(options: { dry_run?: boolean } = {}): Promise<AgingResponse> {
    return this.call(routes.aging, { body: options.dry_run ? { dry_run: true } : undefined });
  }

  /** (+) One stored pattern with all its fields (`patterns/<id>`; the slash is sent as %2F). */
  getPattern(key: string): Promise<ExportRecord> {
    return this.call(routes.getPattern, { params: { key } });
  }

  /** (+) A pattern's skill tags and its last eval observations, newest first. */
  patternHistory(key: string): Promise<PatternHistoryResponse> {
    return this.call(routes.patternHistory, { params: { key } });
  }

  /**
   * (+) Reports how reusing one match of a recall went (POST /v1/outcomes): `recall_id` from the
   * recall's answer, `pattern_key` one of its matches. The same pair again replaces the report.
   */
  reportOutcome(body: OutcomeRequest): Promise<OutcomeResponse> {
    return this.call(routes.reportOutcome, { body }, { shape: ['recall_id', 'pattern_key', 'passed'] });
  }

  /** (+) A pattern's reported outcomes, newest first, with the queries it was recalled for. */
  patternOutcomes(key: string, query: { limit?: number } = {}): Promise<PatternOutcomesResponse> {
    return this.call(routes.patternOutcomes, { params: { key }, query });
  }

  /** (+) One page of stored patterns, newest first; pass the answer's `next_cursor` as `cursor` for the next. */
  listPatterns(query: PatternListQuery = {}): Promise<PatternListResponse> {
    return this.call(routes.listPatterns, { query });
  }

  /** Permanently deletes `patterns/<id>` (the slash is sent as %2F). */
  deletePattern(key: string): Promise<DeletePatternResponse> {
    return this.call(routes.deletePattern, { params: { key } });
  }

  exportAll(): Promise<ExportResponse> {
    return this.call(routes.exportAll);
  }

  /** One import request (at most 10,000 records). */
  importRecords(records: AnyImportRecord[], options: { overwrite?: boolean } = {}): Promise<ImportResponse> {
    return this.call(routes.importRecords, { body: { records, overwrite: options.overwrite ?? false } });
  }

  /**
   * Imports any number of records in requests of at most `chunkSize`; a request refused as too
   * large (413) is split in half and retried, so the server's body limit need not be known.
   * Skipped records are reported with their index in `records`.
   */
  /**
   * (+) Restores recall traces with their outcomes (the NDJSON export's `type: "outcomes"`
   * lines) after their patterns were imported; answers how many traces were restored.
   */
  async importOutcomes(lines: TracedOutcomesLine[], chunkSize = 1_000): Promise<number> {
    let restored = 0;
    for (let i = 0; i < lines.length; i += chunkSize) {
      const res = await this.call(routes.importRecords, { body: { records: [], outcomes: lines.slice(i, i + chunkSize) } });
      restored += res.outcomes_imported ?? 0;
    }
    return restored;
  }

  /**
   * (+) Restores evaluation runs with their cases (the NDJSON export's `type: "evaluation_run"`
   * lines) under their own ids; a run id already stored is skipped. Runs carry their cases' code,
   * so they go in small requests.
   */
  async importEvaluationRuns(lines: EvaluationRunLine[], chunkSize = 20): Promise<{ imported: number; skipped: number }> {
    const totals = { imported: 0, skipped: 0 };
    for (let i = 0; i < lines.length; i += chunkSize) {
      const res = await this.call(routes.importRecords, { body: { records: [], evaluation_runs: lines.slice(i, i + chunkSize) } });
      totals.imported += res.evaluation_runs_imported ?? 0;
      totals.skipped += res.evaluation_runs_skipped ?? 0;
    }
    return totals;
  }

  async importAll(records: AnyImportRecord[], options: ImportAllOptions = {}): Promise<ImportResponse> {
    const totals: ImportResponse = { imported: 0, skipped: 0, total: 0 };
    let sent = 0;
    await sendSplittingTooLarge(records, options.chunkSize, async (chunk, offset) => {
      const result = await this.importRecords(chunk, { overwrite: options.overwrite });
      totals.imported += result.imported;
      totals.skipped += result.skipped;
      totals.total += result.total;
      for (const s of result.skipped_records ?? []) (totals.skipped_records ??= []).push({ ...s, index: s.index + offset });
      sent += chunk.length;
      options.onProgress?.(sent, records.length);
    });
    return totals;
  }

  skillsRegister(body: SkillsRegisterRequest): Promise<SkillsRegisterResponse> {
    return this.call(routes.skillsRegister, { body });
  }

  /** Patterns carrying any (or, with `match_all`, all) of the tags, given as `skills` or `required`. */
  skillsSearch(body: SkillsSearchRequest): Promise<SkillsSearchResponse> {
    return this.call(routes.skillsSearch, { body });
  }

  health(): Promise<HealthResponse> {
    return this.call(routes.health);
  }

  /** Deep health; a 503 carrying the report (status `error`) is returned, not thrown. */
  healthDeep(): Promise<DeepHealthResponse> {
    return this.call(routes.healthDeep, {}, { acceptStatuses: [503] });
  }

  version(): Promise<VersionResponse> {
    return this.call(routes.version);
  }

  /** Closes pooled connections. */
  close(): Promise<void> {
    return this.transport.close();
  }
}
