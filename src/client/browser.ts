/**
 * The client for a browser (the web console): ApiClient over `fetch`, without the Node HTTP
 * transport (undici) that the package's entry (index.ts) brings. Same calls, same paths, same
 * error classes; answers are checked when the zod contracts are passed (route-schemas.ts
 * CONTRACTS) and taken as sent with UNCHECKED, which keeps zod out of a page's bundle.
 */
export { ApiClient } from './api-client.js';
export { UNCHECKED, type SchemaLoader } from './wire.js';
export { FetchTransport, type FetchTransportOptions } from './fetch-transport.js';
export { ApiError, ProtocolError, TransportError } from './errors.js';
export { queryString } from './wire.js';
export { pathOf, routes } from '../contracts/routes.js';
