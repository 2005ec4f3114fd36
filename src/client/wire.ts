import type { z } from 'zod';
import type { HttpMethod, RouteEntry } from '../contracts/routes.js';
import { isRecord } from './errors.js';

/**
 * What every transport shares, with no I/O of its own: the request and stream options, the
 * transport interface, the query string, body parsing and the answer check. The HTTP (undici)
 * transport is in transport.ts, the browser's fetch transport in fetch-transport.ts.
 */

export type { HttpMethod };
export type QueryValue = string | number | boolean | null | undefined;

/** A response contract, or a loader of one (so zod is imported only when a check needs it). */
export type SchemaSource<S extends z.ZodType> = S | (() => Promise<S>);

/** The contract itself, loading it first when given as a loader. */
export async function resolveSchema<S extends z.ZodType>(schema: SchemaSource<S>): Promise<S> {
  return typeof schema === 'function' ? schema() : schema;
}

export interface RequestOptions<S extends z.ZodType> {
  /** JSON body (serialised here); omitted for GET/DELETE. */
  body?: unknown;
  /** Query parameters; undefined and null values are left out. */
  query?: Record<string, QueryValue>;
  /** The contract of a successful response; the parsed value is returned. */
  schema: SchemaSource<S>;
  /**
   * Top-level fields every successful answer has. With `responseCheck: 'shape'` only these are
   * checked (no zod); requests without them always use the contract.
   */
  shape?: string[];
  headers?: Record<string, string>;
  /**
   * Non-2xx statuses whose body is still a valid answer (deep health answers 503 with its
   * report). Their body is parsed with `schema`; when it does not match, ApiError is thrown.
   */
  acceptStatuses?: number[];
}

/**
 * What ServiceClient sends its requests through: HTTP by default; the server's MCP endpoint
 * passes an in-process transport that dispatches to its own routes.
 */
export interface RequestTransport {
  readonly baseUrl: string;
  request<S extends z.ZodType>(method: HttpMethod, path: string, options: RequestOptions<S>): Promise<z.infer<S>>;
  /** A streamed GET (the NDJSON export); transports without one cannot stream. */
  stream?(path: string, options: StreamOptions): Promise<StreamedResponse>;
  close(): Promise<void>;
}

export interface StreamOptions {
  query?: Record<string, QueryValue>;
  accept: string;
}

export interface StreamedResponse {
  headers: Record<string, string>;
  // Uint8Array, not Buffer: the declarations must not need @types/node (the chunks are Buffers at run time).
  body: AsyncIterable<Uint8Array> & { destroy(): void };
}

/** `?a=1&b=x` of the defined values (empty when none); shared with the in-process MCP transport. */
export function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    params.append(name, String(value));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** A body as JSON when it parses, else its text (null when empty). */
export function parseBody(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Checks a success answer: with `responseCheck: 'shape'` and declared top-level fields only
 * those (no zod), else the whole contract. `where` names the first problem for the error.
 */
export async function checkAnswer<S extends z.ZodType>(
  body: unknown, options: RequestOptions<S>, responseCheck: 'contract' | 'shape' | undefined,
): Promise<{ success: true; data: z.infer<S> } | { success: false; where: string }> {
  if (responseCheck === 'shape' && options.shape) {
    const missing = isRecord(body) ? options.shape.find((field) => !(field in body)) : 'body';
    return missing === undefined ? { success: true, data: body as z.infer<S> } : { success: false, where: ` (${missing}: missing)` };
  }
  const schema = await resolveSchema(options.schema);
  const result = schema.safeParse(body);
  if (result.success) return { success: true, data: result.data };
  const issue = result.error.issues[0];
  return { success: false, where: issue ? ` (${issue.path.join('.') || 'body'}: ${issue.message})` : '' };
}

/**
 * Where a client gets the contracts it checks answers with. ServiceClient loads the zod
 * contracts on first use (route-schemas.ts); a browser client passes UNCHECKED and stays free
 * of zod, trusting its own origin's answers.
 */
export interface SchemaLoader {
  /** The JSON success schema of a route table entry. @internal (the table's types stay out of the package's declarations) */
  response(entry: RouteEntry): () => Promise<z.ZodType>;
  /** The 202 answer of a call with `Prefer: respond-async`. */
  jobAccepted(): Promise<z.ZodType>;
  /** One line of the NDJSON governance export. */
  ndjsonExportRecord(): Promise<z.ZodType>;
}

/** Accepts any answer as it came (what UNCHECKED hands out in place of a contract). */
const AS_SENT = {
  safeParse: (data: unknown) => ({ success: true as const, data }),
  parse: (data: unknown) => data,
} as unknown as z.ZodType;

/** No checks: every answer is taken as sent (the web console; keeps zod out of its bundle). */
export const UNCHECKED: SchemaLoader = {
  response: () => async () => AS_SENT,
  jobAccepted: async () => AS_SENT,
  ndjsonExportRecord: async () => AS_SENT,
};
