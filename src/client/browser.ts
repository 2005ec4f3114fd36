/**
 * The client for a browser (the web console): ApiClient over `fetch`, without the Node HTTP
 * transport (undici) that the package's entry (index.ts) brings. Same calls, same contracts,
 * same error classes.
 */
export { ApiClient } from './api-client.js';
export { FetchTransport, type FetchTransportOptions } from './fetch-transport.js';
export { ApiError, ProtocolError, TransportError } from './errors.js';
export { queryString } from './wire.js';
export { pathOf, routes } from '../contracts/routes.js';
