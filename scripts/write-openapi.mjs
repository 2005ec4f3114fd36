// Writes openapi.json (the HTTP API's OpenAPI 3.1 document) beside package.json after the
// TypeScript build: a server is built (never listening) so the document lists exactly the
// routes `service serve` registers, from the same zod contracts the routes parse with.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { loadConfig } = await import(join(root, 'dist/src/config.js'));
const { createApp } = await import(join(root, 'dist/src/app.js'));
const { buildServer } = await import(join(root, 'dist/server/app.js'));
const { registeredRoutes } = await import(join(root, 'dist/server/route-registry.js'));
const { buildOpenApiDocument } = await import(join(root, 'dist/server/openapi/document.js'));
const { readVersionInfo } = await import(join(root, 'dist/server/version.js'));

const dataPath = mkdtempSync(join(tmpdir(), 'openapi-build-'));
// No request is ever served: this embedder only lets the app start without loading a model.
const routeListingEmbedder = { info: { provider: 'local', model: 'route-listing', dimension: 2 }, embed: async (texts) => texts.map(() => new Float32Array([1, 0])) };
try {
  const config = loadConfig({
    SERVICE_DATA_PATH: dataPath, SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true', SERVICE_LLM_PROVIDER: 'none',
    SERVICE_LOCAL_EMBEDDINGS: '1', SERVICE_METRICS: 'true', SERVICE_LOG_LEVEL: 'silent',
  });
  const app = await createApp(config, { embedder: routeListingEmbedder }, { runJobs: false });
  const server = await buildServer(app);
  await server.ready();
  const { document, undocumented } = buildOpenApiDocument(registeredRoutes(server), (await readVersionInfo()).app_version);
  if (undocumented.length > 0) throw new Error(`routes registered without defineRoute (server/define-route.ts): ${undocumented.join(', ')}`);
  writeFileSync(join(root, 'openapi.json'), JSON.stringify(document, null, 2) + '\n');
  await server.close();
  await app.close();
} finally {
  rmSync(dataPath, { recursive: true, force: true });
}
