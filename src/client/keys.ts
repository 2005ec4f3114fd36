import type {
  AccessResponse, BootstrapResponse, CreateKeyRequest, IssuedKey, KeyInfo, KeyListResponse,
} from '../contracts/keys.js';
import { routes } from '../contracts/routes.js';
import type { ApiClient } from './api-client.js';

/**
 * Typed calls of the API key endpoints (DB auth mode), over the route table (ApiClient.call).
 * Secrets come back only from bootstrap, create and rotate; callers must show them once and
 * never log them.
 */
export class KeysClient {
  constructor(private readonly client: ApiClient) {}

  /** The first owner key, bought with SERVICE_BOOTSTRAP_TOKEN (no API key needed). */
  bootstrap(token: string): Promise<BootstrapResponse> {
    return this.client.call(routes.bootstrapKey, { body: { token } });
  }

  create(body: CreateKeyRequest): Promise<IssuedKey> {
    return this.client.call(routes.createKey, { body });
  }

  /**
   * Keys of the caller's project; an owner key may name another project of its tenant
   * (`projectId`) or ask for every project's (`allProjects`).
   */
  list(options: { projectId?: string; allProjects?: boolean } = {}): Promise<KeyListResponse> {
    const query = { project_id: options.projectId, all_projects: options.allProjects ? true : undefined };
    return this.client.call(routes.listKeys, { query });
  }

  /** Owner keys find the key in any project of their tenant; other keys in their own project. */
  revoke(keyId: string): Promise<KeyInfo> {
    return this.client.call(routes.revokeKey, { params: { id: keyId } });
  }

  rotate(keyId: string): Promise<IssuedKey> {
    return this.client.call(routes.rotateKey, { params: { id: keyId } });
  }

  /** (+) The calling key's role, its permissions and the classifications it may browse (any key). */
  access(): Promise<AccessResponse> {
    return this.client.call(routes.access);
  }
}
