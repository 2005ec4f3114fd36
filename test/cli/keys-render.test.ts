import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliInTty, stripAnsi } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * `service keys list` on a real terminal (a pseudo-TTY through `script`) with a revoked key:
 * each row shows each cell once (a revoked row is dimmed cell by cell, never repeated).
 */
const hasPg = await requirePostgres('keys list rendering');
const TOKEN = 'cli-render-token-0123456789-abcdefghijklmn';

describe.skipIf(!hasPg)('keys list on a terminal', () => {
  let db: TestDatabase;
  let dir: { path: string; remove(): Promise<void> };
  let server: ServerHandle;
  let owner: string;
  let revokedId: string;

  beforeAll(async () => {
    db = await createTestDatabase('cli_keys_render');
    const schema = await createMigratedSchema(db, 'cli_keys_render');
    dir = await tempDir('cli-keys-render-');
    server = await startServer({
      dataPath: join(dir.path, 'data'),
      env: { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: schema.url, SERVICE_BOOTSTRAP_TOKEN: TOKEN },
    });
    owner = (JSON.parse((await runCli(['bootstrap', '--token', TOKEN, '--url', server.url])).stdout) as { secret: string }).secret;
    const created = await runCli(['keys', 'create', '--name', 'old-ci-key', '--url', server.url, '--api-key', owner]);
    revokedId = (JSON.parse(created.stdout) as { key_id: string }).key_id;
    expect((await runCli(['keys', 'revoke', revokedId, '--yes', '--url', server.url, '--api-key', owner])).code).toBe(0);
  });
  afterAll(async () => {
    await server?.stop();
    await dir?.remove();
    await db?.drop();
  });

  it.each([[{}], [{ NO_COLOR: '1' }]])('renders a revoked key as one plain row (env %j)', async (env) => {
    const res = await runCliInTty(['keys', 'list', '--url', server.url, '--api-key', owner], { env });
    expect(res.code).toBe(0);
    const lines = stripAnsi(res.output).split(/\r?\n/);
    const row = lines.filter((l) => l.includes(revokedId));
    expect(row).toHaveLength(1);
    expect(row[0].split(revokedId)).toHaveLength(2);
    expect(row[0]).toMatch(new RegExp(`^${revokedId}\\s+old-ci-key\\s+editor\\s+\\S+…\\s+revoked\\s+\\d{4}-\\d\\d-\\d\\d\\s+-\\s+-$`));
    expect(lines.some((l) => /^key id\s+name\s+role/.test(l))).toBe(true);
  });
});
