import type { z } from 'zod';
import type { DeepHealthResponse, HealthResponse, VersionResponse } from '../contracts/health.js';
import type { PatternListQuery, PatternListResponse } from '../contracts/patterns.js';
import type {
  AgingResponse, AnyImportRecord, DeletePatternResponse, ExportRecord, ExportResponse, ImportResponse, LearnRequest, LearnResponse,
  MetricsResponse, RecallBatchResponse, RecallRequest, RecallResponse, SkillsRegisterResponse, SkillsSearchResponse,
} from '../contracts/memory.js';
import { apiErrorFor } from './api-errors.js';
import { describeErrorBody, type ApiError } from './errors.js';
import { AnalyticsClient } from './analytics.js';
import { BillingClient } from './billing.js';
import { GovernanceClient } from './governance.js';
import { sendSplittingTooLarge } from './import-chunks.js';
import { JobsClient } from './jobs.js';
import { KeysClient } from './keys.js';
import { LlmClient } from './llm.js';
import {
  HttpTransport, type HttpMethod, type RequestOptions, type RequestTransport, type RetryPolicy, type StreamedResponse, type StreamOptions,
} from './transport.js';

// The contracts are imported when an answer is checked, not when the client is: a caller that
// only wants the shape check (the CLI) never loads zod. Node caches the module after the first.
const memory = () => import('../contracts/memory.js');
const health = () => import('../contracts/health.js');
const patterns = () => import('../contracts/patterns.js');

export interface ServiceClientOptions {
  /** Base URL of a running service, e.g. http://127.0.0.1:8000 (a path prefix is kept). */
  url: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string | null;
  /** Sent as `X-Project-Id` (env and dev auth modes select the project with it). */
  project?: string | null;
  /** Per-request limit for the response headers and for the body, in ms (default 60 s). */
  timeoutMs?: number;
  /** User-Agent header (default `agent-memory-service-client`). */
  userAgent?: string;
  /** Sends requests through this instead of HTTP (its own auth); url and headers are then unused. */
  transport?: RequestTransport;
  /**
   * `contract` (default): every answer is parsed with its zod contract. `shape`: the answers
   * of the hot endpoints (learn, recall) are only checked for their top-level fields.
   */
  responseCheck?: 'contract' | 'shape';
  /**
   * Wait and retry when the service answers 429/503 with RateLimit-Reset or Retry-After, up to
   * `maxWaitMs` in total per request. Off unless given.
   */
  retry?: RetryPolicy;
}

/** The area clients, each made on first use. */
interface Areas {
  jobs: JobsClient;
  keys: KeysClient;
  llm: LlmClient;
  analytics: AnalyticsClient;
  governance: GovernanceClient;
  billing: BillingClient;
}

/** GET /v1/recall takes the recall fields in the query string and is always read-only. */
export type RecallGetQuery = Omit<RecallRequest, 'readonly'>;

export interface SkillsRegisterInput { pattern_key: string; skills: string[] }
export interface SkillsSearchInput { skills: string[]; match_all?: boolean }

export interface ImportAllOptions {
  overwrite?: boolean;
  /** Records per request (the spec allows at most 10,000). */
  chunkSize?: number;
  /** Called after each accepted request with the running totals. */
  onProgress?: (sent: number, total: number) => void;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const RECALL_SHAPE = ['matches', 'has_more', 'next_offset'];

/**
 * Typed client of the service's HTTP API: one method per endpoint, each answer validated with
 * the same zod contract the server uses. Memory, skills and health calls are methods here;
 * every other area is a property (`client.jobs`, `client.keys`, `client.llm`,
 * `client.analytics`, `client.governance` with `.retention`, `client.billing`) sharing this
 * client's connections. Reuses connections (keep-alive); call close() when done.
 * New endpoints are one-liners on top of `request()`.
 */
export class ServiceClient {
  private readonly transport: RequestTransport;
  private areas: Partial<Areas> = {};

  constructor(options: ServiceClientOptions) {
    if (options.transport) {
      this.transport = options.transport;
      return;
    }
    const headers: Record<string, string> = { 'user-agent': options.userAgent ?? 'agent-memory-service-client' };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    if (options.project) headers['x-project-id'] = options.project;
    this.transport = new HttpTransport({
      url: options.url,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      headers,
      responseCheck: options.responseCheck,
      retry: options.retry,
    });
  }

  /** The normalised base URL requests go to. */
  get url(): string {
    return this.transport.baseUrl;
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

  /** Generic call: any endpoint, answer parsed with `schema`. Throws ApiError / TransportError / ProtocolError. */
  request<S extends z.ZodType>(method: HttpMethod, path: string, options: RequestOptions<S>): Promise<z.infer<S>> {
    return this.transport.request(method, path, options);
  }

  /** A streamed GET (e.g. the NDJSON export): headers, then the body chunk by chunk. */
  stream(path: string, options: StreamOptions): Promise<StreamedResponse> {
    if (!this.transport.stream) throw new Error('this client\'s transport cannot stream');
    return this.transport.stream(path, options);
  }

  learn(body: LearnRequest): Promise<LearnResponse> {
    return this.request('POST', '/v1/learn', { body, schema: async () => (await memory()).LearnResponse, shape: ['stored', 'pattern_count'] });
  }

  recall(body: RecallRequest): Promise<RecallResponse> {
    return this.request('POST', '/v1/recall', { body, schema: async () => (await memory()).RecallResponse, shape: RECALL_SHAPE });
  }

  /**
   * (+) Many recalls in one request (POST /v1/recall/batch, at most 100): each answer in its
   * place, or the ApiError POST /v1/recall would have thrown for that request.
   */
  async recallBatch(requests: RecallRequest[]): Promise<(RecallResponse | ApiError)[]> {
    const res = await this.request('POST', '/v1/recall/batch', {
      body: { requests }, schema: async () => (await memory()).RecallBatchResponse, shape: ['results'],
    }) as RecallBatchResponse;
    return res.results.map((item) => ('result' in item
      ? item.result
      : apiErrorFor(item.error.status, describeErrorBody(item.error.status, item.error.body), item.error.body, null, null)));
  }

  /** Read-only recall through the query string (no reuse side effects). */
  recallGet(query: RecallGetQuery): Promise<RecallResponse> {
    return this.request('GET', '/v1/recall', { query: { ...query }, schema: async () => (await memory()).RecallResponse, shape: RECALL_SHAPE });
  }

  metrics(): Promise<MetricsResponse> {
    return this.request('GET', '/v1/metrics', { schema: async () => (await memory()).MetricsResponse });
  }

  /** Decays and prunes; with `dry_run` (+) only reports what it would do. */
  aging(options: { dry_run?: boolean } = {}): Promise<AgingResponse> {
    const body = options.dry_run ? { dry_run: true } : undefined;
    return this.request('POST', '/v1/aging', { body, schema: async () => (await memory()).AgingResponse });
  }

  /** (+) One stored pattern with all its fields (`patterns/<id>`). */
  getPattern(key: string): Promise<ExportRecord> {
    return this.request('GET', `/v1/patterns/${encodeURIComponent(key)}`, { schema: async () => (await memory()).ExportRecord });
  }

  /** (+) One page of stored patterns, newest first; pass the answer's `next_cursor` as `cursor` for the next. */
  listPatterns(query: PatternListQuery = {}): Promise<PatternListResponse> {
    return this.request('GET', '/v1/patterns', { query: { ...query }, schema: async () => (await patterns()).PatternListResponse });
  }

  /** Permanently deletes `patterns/<id>` (the slash is sent as %2F). */
  deletePattern(key: string): Promise<DeletePatternResponse> {
    return this.request('DELETE', `/v1/patterns/${encodeURIComponent(key)}`, { schema: async () => (await memory()).DeletePatternResponse });
  }

  exportAll(): Promise<ExportResponse> {
    return this.request('GET', '/v1/export', { schema: async () => (await memory()).ExportResponse });
  }

  /** One import request (at most 10,000 records). */
  importRecords(records: AnyImportRecord[], options: { overwrite?: boolean } = {}): Promise<ImportResponse> {
    return this.request('POST', '/v1/import', {
      body: { records, overwrite: options.overwrite ?? false },
      schema: async () => (await memory()).ImportResponse,
    });
  }

  /**
   * Imports any number of records in requests of at most `chunkSize`; a request refused as too
   * large (413) is split in half and retried, so the server's body limit need not be known.
   * Skipped records are reported with their index in `records`.
   */
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

  skillsRegister(body: SkillsRegisterInput): Promise<SkillsRegisterResponse> {
    return this.request('POST', '/v1/skills/register', { body, schema: async () => (await memory()).SkillsRegisterResponse });
  }

  skillsSearch(body: SkillsSearchInput): Promise<SkillsSearchResponse> {
    return this.request('POST', '/v1/skills/search', { body, schema: async () => (await memory()).SkillsSearchResponse });
  }

  health(): Promise<HealthResponse> {
    return this.request('GET', '/v1/health', { schema: async () => (await health()).HealthResponse });
  }

  /** Deep health; a 503 carrying the report (status `error`) is returned, not thrown. */
  healthDeep(): Promise<DeepHealthResponse> {
    return this.request('GET', '/v1/health/deep', { schema: async () => (await health()).DeepHealthResponse, acceptStatuses: [503] });
  }

  version(): Promise<VersionResponse> {
    return this.request('GET', '/v1/version', { schema: async () => (await health()).VersionResponse });
  }

  /** Closes pooled connections. */
  close(): Promise<void> {
    return this.transport.close();
  }
}
