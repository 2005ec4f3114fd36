import type {
  BootstrapResponse, CreateKeyRequest, IssuedKey, KeyInfo, KeyListResponse,
} from '../contracts/keys.js';
import type { ServiceClient } from './service-client.js';

// Contracts (and zod) load when a keys answer is first checked, not with the client:
// `service recall` imports the client and must stay free of zod (commands/registry.ts).
const contracts = () => import('../contracts/keys.js');

/**
 * Typed calls of the API key endpoints (DB auth mode), on top of ServiceClient.request().
 * Secrets come back only from bootstrap, create and rotate; callers must show them once and
 * never log them.
 */
export class KeysClient {
  constructor(private readonly client: ServiceClient) {}

  /** The first owner key, bought with SERVICE_BOOTSTRAP_TOKEN (no API key needed). */
  bootstrap(token: string): Promise<BootstrapResponse> {
    return this.client.request('POST', '/v1/keys/bootstrap', { body: { token }, schema: async () => (await contracts()).BootstrapResponse });
  }

  create(body: CreateKeyRequest): Promise<IssuedKey> {
    return this.client.request('POST', '/v1/keys', { body, schema: async () => (await contracts()).IssuedKey });
  }

  /**
   * Keys of the caller's project; an owner key may name another project of its tenant
   * (`projectId`) or ask for every project's (`allProjects`).
   */
  list(options: { projectId?: string; allProjects?: boolean } = {}): Promise<KeyListResponse> {
    const query: Record<string, string> = {};
    if (options.projectId !== undefined) query.project_id = options.projectId;
    if (options.allProjects) query.all_projects = 'true';
    return this.client.request('GET', '/v1/keys', { query, schema: async () => (await contracts()).KeyListResponse });
  }

  /** Owner keys find the key in any project of their tenant; other keys in their own project. */
  revoke(keyId: string): Promise<KeyInfo> {
    return this.client.request('DELETE', `/v1/keys/${encodeURIComponent(keyId)}`, { schema: async () => (await contracts()).KeyInfo });
  }

  rotate(keyId: string): Promise<IssuedKey> {
    return this.client.request('POST', `/v1/keys/${encodeURIComponent(keyId)}/rotate`, { schema: async () => (await contracts()).IssuedKey });
  }
}

export type { BootstrapResponse, CreateKeyRequest, IssuedKey, KeyInfo, KeyListResponse } from '../contracts/keys.js';
