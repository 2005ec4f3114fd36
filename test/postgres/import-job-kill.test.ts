/**
 * Issue 25, 9: an async import job (Prefer: respond-async) whose server is killed with -9
 * part-way is run again after the restart, and its result must add up to what is stored:
 * `skipped` = the records the killed run had already stored, `imported` = the ones the rerun
 * added, and every record stored exactly once. Real `service serve` children, JSON and
 * PostgreSQL storage, several kill points (waited for by the stored count, never by time).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJsonStorage } from '../../src/adapters/storage/json/index.js';
import { BIN } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { adminQuery, createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';
import { startServer, type ServerHandle } from '../support/server.js';

const hasPg = await requirePostgres('import job kill -9');
const built = existsSync(join(BIN, '..', '..', 'dist', 'commands', 'main.js'));
if (!built) {
  if (process.env.CI && process.env.CI !== 'false') throw new Error('dist/ is missing: `npm test` builds it first');
  console.warn('\n[skip] import job kill -9: run `npm run build` first (the test spawns bin/service.js).\n');
}

const RECORDS = Number(process.env.IMPORT_KILL_RECORDS ?? 1_000);
/** Stored counts at which the server is killed: after the first batch, mid-way, near the end. */
const KILL_AT = [64, Math.floor(RECORDS / 2), Math.floor(RECORDS * 0.8)];

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Backend {
  name: string;
  env: Record<string, string>;
  /** Patterns stored in the project, read with the server down. */
  storedCount(project: string): Promise<number>;
}

describe.skipIf(!hasPg || !built)('an import job killed with -9 and run again (issue 25, 9)', () => {
  let db: TestDatabase;
  let schema: TestSchema;
  let dir: { path: string; remove(): Promise<void> };
  let server: ServerHandle | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('import_kill');
    schema = await createMigratedSchema(db, 'kill');
    dir = await tempDir('svc-import-kill-');
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await dir?.remove();
    await db?.drop();
  });

  const backends = (): Backend[] => [
    {
      name: 'JSON',
      env: { SERVICE_STORAGE: 'json' },
      async storedCount(project) {
        const json = await createJsonStorage({ dataPath: join(dir.path, 'json') });
        try {
          return await json.patterns.count({ tenant_id: 'default', project_id: project });
        } finally {
          await json.close();
        }
      },
    },
    {
      name: 'PostgreSQL',
      env: { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: schema.url },
      async storedCount(project) {
        const res = await adminQuery(`SELECT count(*)::int AS n FROM "${schema.schema}".patterns WHERE project_id = $1`, [project], db.url);
        return (res.rows[0] as { n: number }).n;
      },
    },
  ];

  const start = (backend: Backend) =>
    startServer({
      dataPath: join(dir.path, 'json'),
      // One process: kill -9 must take the job's runner down with it.
      args: ['--workers', '1'],
      env: {
        ...backend.env,
        SERVICE_AUTH_MODE: 'dev',
        SERVICE_ALLOW_NO_AUTH: 'true',
        SERVICE_MAX_BODY_SIZE: String(8 * 1024 * 1024),
        // The test polls the stored count every few milliseconds.
        SERVICE_RATE_LIMIT_DEFAULT: '1000000',
        SERVICE_RATE_LIMIT_EXPENSIVE: '1000000',
        // The restarted server takes over the dead run's job within a couple of seconds.
        SERVICE_JOB_STALE_SECONDS: '2',
        SERVICE_JOB_POLL_INTERVAL: '0.2',
      },
    });

  async function call(method: string, path: string, project: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(server!.url + path, {
      method,
      headers: { 'x-project-id': project, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /**
   * The kill must land while the import still runs. The test kills once the stored count
   * reaches `killAt`; on a fast run the last records can be stored between that poll and the
   * SIGKILL. Such a run proves nothing about the rerun, so it is not counted: the kill point
   * is tried again on a fresh project, earlier (at most MAX_TRIES times, then the test fails).
   */
  const MAX_TRIES = 4;

  for (const which of [0, 1]) {
    it(`${which === 0 ? 'JSON' : 'PostgreSQL'}: kill -9 at ${KILL_AT.join(', ')} stored records; each rerun reports what it stored`, async () => {
      const backend = backends()[which];
      for (const [n, firstKillAt] of KILL_AT.entries()) {
        let killAt = firstKillAt;
        let before = RECORDS;
        let project = '';
        let jobId = '';
        for (let attempt = 0; attempt < MAX_TRIES && before === RECORDS; attempt++) {
          project = `kill-${which}-${n}-${attempt}`;
          server = await start(backend);
          const records = Array.from({ length: RECORDS }, (_, i) => ({ task: `Archive the ledger entry ${n}-${i} of the month`, code: `archive(${i})`, eval_score: 6 }));
          const accepted = await call('POST', '/v1/import', project, { records }, { prefer: 'respond-async' });
          expect(accepted.status).toBe(202);
          jobId = accepted.body.job_id as string;
          const at = killAt;
          await until(`${at} records stored`, async () => {
            const m = await call('GET', '/v1/metrics', project);
            expect(m.status).toBe(200);
            return (m.body.pattern_count as number) >= at ? true : undefined;
          });
          await server.stop('SIGKILL');
          before = await backend.storedCount(project);
          killAt = Math.max(1, Math.floor(killAt * 0.6));
        }
        expect(before, `the kill came before the import finished (in ${MAX_TRIES} tries)`).toBeLessThan(RECORDS);

        server = await start(backend);
        const job = await until(`job ${jobId} to finish`, async () => {
          const res = await call('GET', `/v1/jobs/${jobId}`, project);
          const status = res.body.status;
          return status === 'completed' || status === 'failed' ? res.body : undefined;
        });
        expect(job).toMatchObject({ status: 'completed', attempts: 2 });
        const after = (await call('GET', '/v1/metrics', project)).body.pattern_count as number;
        expect(after).toBe(RECORDS);
        // The rerun's counts add up to what is stored.
        expect(job.result).toEqual({ imported: RECORDS - before, skipped: before, total: RECORDS });
        await server.stop('SIGKILL');
      }
    }, 600_000);
  }
});
