import { ApiClient, FetchTransport, UNCHECKED } from '../../src/client/browser.js';

/**
 * The console's only way to the server: the service's own client (src/client, the same calls
 * and contracts as the CLI) over `fetch` to this origin, with the key the user typed in
 * (sessionStorage, sent as a Bearer header; never in a URL or a cookie).
 */
const KEY_SLOT = 'service-console-key';
const PROJECT_SLOT = 'service-console-project';

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

function sessionHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  const key = session.key();
  const project = session.project();
  if (key) headers.authorization = `Bearer ${key}`;
  if (project) headers['x-project-id'] = project;
  return headers;
}

/** Answers are taken as sent (UNCHECKED): the page trusts its own origin and stays small (no zod). */
export const client = new ApiClient(new FetchTransport({ headers: sessionHeaders }), UNCHECKED);

/** Form and URL values as a query: empty fields are left out (the API would refuse `limit=`). */
export function filled<T extends Record<string, string | number | boolean | null | undefined>>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined && value !== null && value !== '')) as Partial<T>;
}

export { ApiError, TransportError, pathOf, queryString, routes } from '../../src/client/browser.js';
