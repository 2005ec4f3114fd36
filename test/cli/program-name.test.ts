import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { createTestDatabase, requirePostgres } from '../support/pg.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * Run as `agent-memory`, every command line the CLI suggests says `agent-memory`: a `service`
 * line would run Debian's /usr/sbin/service. Hints, "more:" lines, job follow-ups, help
 * examples and the server's own messages that name a command (the CLI names them as called).
 */
const AGENT_MEMORY = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'agent-memory.js');
const hasPg = await requirePostgres('agent-memory naming');

const agentMemory = (args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> => runCli(args, { env, bin: AGENT_MEMORY });

/** A suggested `service …` command line, in backticks or not. */
const SERVICE_LINE = /(^|[`\s])service (serve|patterns|jobs|analytics|migrate|recall|learn|keys|billing|bootstrap|reindex)\b/m;

let server: ServerHandle;
let dir: { path: string; remove(): Promise<void> };

beforeAll(async () => {
  dir = await tempDir('svc-program-name-');
  server = await startServer({ dataPath: join(dir.path, 'data') });
  for (const task of ['parse a CSV file', 'resize an image']) {
    expect((await agentMemory(['learn', '--task', task, '--code', 'x', '--eval-score', '8', '--url', server.url])).code).toBe(0);
  }
});
afterAll(async () => {
  await server?.stop();
  await dir?.remove();
});

describe('run as agent-memory', () => {
  it('the "more:" line of patterns list', async () => {
    const res = await agentMemory(['patterns', 'list', '--limit', '1', '--format', 'table', '--url', server.url]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^more: agent-memory patterns list --cursor \S+$/m);
    expect(res.stdout).not.toMatch(SERVICE_LINE);
  });

  it('error hints: an unreachable server, a missing rollup', async () => {
    const refused = await agentMemory(['metrics', '--url', 'http://127.0.0.1:1']);
    expect(refused.stderr).toContain('hint: is `agent-memory serve` running there?');
    const rollup = await agentMemory(['analytics', 'get', 'weekly', '--url', server.url]);
    expect(rollup.code).toBe(4);
    expect(rollup.stderr).toContain('hint: compute it first: `agent-memory analytics rollup <window>`');
    for (const res of [refused, rollup]) expect(res.stderr).not.toMatch(SERVICE_LINE);
  });

  it('the follow-up of a background job', async () => {
    const res = await agentMemory(['aging', '--async', '--yes', '--format', 'table', '--url', server.url]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/follow it with `agent-memory jobs wait \S+`/);
  });

  it('help examples', async () => {
    const res = await agentMemory(['recall', '--help']);
    expect(res.stdout).toContain('$ agent-memory recall "parse a CSV file"');
    expect(res.stdout).toContain('| agent-memory recall - --limit 3 --json');
    expect(res.stdout).not.toMatch(SERVICE_LINE);
  });

  it.skipIf(!hasPg)('a server-side message that names a command (serve on an unmigrated database)', async () => {
    const db = await createTestDatabase('agent_memory_name');
    try {
      const res = await agentMemory(['serve', '--port', '0'], { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: db.url, SERVICE_DATA_PATH: join(dir.path, 'pg-data') });
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain('run `agent-memory migrate up`');
      expect(res.stderr).not.toMatch(SERVICE_LINE);
    } finally {
      await db.drop();
    }
  });
});
