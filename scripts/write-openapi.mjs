// Writes openapi.json (the HTTP API's OpenAPI 3.1 document) beside package.json after the
// TypeScript build: a server is built (never listening) so the document lists exactly the
// routes `service serve` registers, from the same zod contracts the routes parse with.
// Usage: node scripts/write-openapi.mjs [BUILD_DIR] (the compiled build, default dist/).
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const build = resolve(root, process.argv[2] ?? 'dist');
const load = (rel) => import(pathToFileURL(join(build, rel)).href);
const { loadConfig } = await load('src/config/index.js');
const { createApp } = await load('src/app.js');
const { buildServer } = await load('server/app.js');
const { registeredRoutes } = await load('server/route-registry.js');
const { buildOpenApiDocument } = await load('server/openapi/document.js');
const { readVersionInfo } = await load('server/version.js');

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
  // Written whole, then renamed over the old one: a reader never sees half a document.
  const tmp = join(root, `openapi.json.${process.pid}`);
  writeFileSync(tmp, JSON.stringify(document, null, 2) + '\n');
  renameSync(tmp, join(root, 'openapi.json'));
  await server.close();
  await app.close();
} finally {
  rmSync(dataPath, { recursive: true, force: true });
}
