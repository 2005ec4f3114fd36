/**
 * The console's only way to the server: the public REST API on this origin, with the key the
 * user typed in (sessionStorage, sent as a Bearer header; never in a URL or a cookie).
 */
const KEY_SLOT = 'service-console-key';
const PROJECT_SLOT = 'service-console-project';

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY_SLOT),
  project: (): string | null => sessionStorage.getItem(PROJECT_SLOT),
  save(key: string, project: string): void {
    if (key) sessionStorage.setItem(KEY_SLOT, key);
    else sessionStorage.removeItem(KEY_SLOT);
    if (project) sessionStorage.setItem(PROJECT_SLOT, project);
    else sessionStorage.removeItem(PROJECT_SLOT);
  },
  clear(): void {
    sessionStorage.removeItem(KEY_SLOT);
    sessionStorage.removeItem(PROJECT_SLOT);
  },
};

export type Query = Record<string, string | number | boolean | undefined | null>;

export function queryString(query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

async function errorOf(response: Response): Promise<ApiError> {
  let code = `http_${response.status}`;
  let message = response.statusText || 'request failed';
  try {
    const body = (await response.json()) as { code?: string; detail?: string; message?: string; error?: string };
    code = body.code ?? code;
    message = body.detail ?? body.message ?? body.error ?? message;
  } catch {
    // Not JSON (a proxy's page): keep the status line.
  }
  return new ApiError(response.status, code, message);
}

async function send(method: string, path: string, body?: unknown, query?: Query): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const key = session.key();
  const project = session.project();
  if (key) headers.authorization = `Bearer ${key}`;
  if (project) headers['x-project-id'] = project;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path + queryString(query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (err) {
    throw new ApiError(0, 'network_error', `the server could not be reached (${(err as Error).message})`);
  }
  if (!response.ok) throw await errorOf(response);
  return response;
}

export async function api<T>(method: string, path: string, body?: unknown, query?: Query): Promise<T> {
  const response = await send(method, path, body, query);
  return (await response.json()) as T;
}

export async function apiText(path: string, query?: Query): Promise<string> {
  return (await send('GET', path, undefined, query)).text();
}

export const get = <T>(path: string, query?: Query) => api<T>('GET', path, undefined, query);

/** A path segment of a pattern key (`patterns/abc` → `patterns%2Fabc`). */
export const keyPath = (key: string) => encodeURIComponent(key);
