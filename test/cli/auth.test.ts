import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/** A server with static keys (SERVICE_API_KEYS → env auth mode) and the CLI's key handling. */

const KEY_ONE = 'cli-test-key-one-0123456789';
const KEY_TWO = 'cli-test-key-two-9876543210';

let dir: { path: string; remove(): Promise<void> };
let server: ServerHandle;

beforeAll(async () => {
  dir = await tempDir('cli-auth-');
  server = await startServer({ dataPath: join(dir.path, 'data'), env: { SERVICE_API_KEYS: `${KEY_ONE},${KEY_TWO}` } });
});
afterAll(async () => {
  await server?.stop();
  await dir.remove();
});

describe('authentication through the CLI', () => {
  it('no key: exit 3 with the detail and a hint', async () => {
    const res = await runCli(['health', '--url', server.url]);
    expect(res.code).toBe(3);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^error: .+\n {2}hint: pass --api-key or set SERVICE_API_KEY[^\n]*\n$/);
  });

  it('a wrong key: exit 3', async () => {
    const res = await runCli(['recall', 'anything', '--url', server.url, '--api-key', 'not-a-key']);
    expect(res.code).toBe(3);
  });

  it('--api-key and SERVICE_API_KEY both authenticate', async () => {
    const flag = await runCli(['learn', '--task', 'authenticated learn', '--code', 'x', '--eval-score', '6', '--url', server.url, '--api-key', KEY_ONE]);
    expect(flag.code).toBe(0);
    expect(JSON.parse(flag.stdout)).toMatchObject({ stored: true });

    const env = await runCli(['health'], { env: { SERVICE_URL: server.url, SERVICE_API_KEY: KEY_TWO } });
    expect(env.code).toBe(0);
    expect(JSON.parse(env.stdout)).toMatchObject({ status: 'ok', pattern_count: 1 });
  });

  it('the key never appears in help output', async () => {
    const res = await runCli(['recall', '--help'], { env: { SERVICE_API_KEY: KEY_ONE } });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('--api-key <key>');
    expect(res.stdout).toContain('SERVICE_API_KEY');
    expect(res.stdout).not.toContain(KEY_ONE);
  });

  it('version needs no key', async () => {
    const res = await runCli(['version', '--url', server.url]);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ server: { api_version: 'v1' } });
  });
});
