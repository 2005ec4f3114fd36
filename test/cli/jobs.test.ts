import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/client/index.js';
import { JobsClient } from '../../src/client/jobs.js';
import { reply, startFakeLlm, type FakeLlm } from '../fixtures/fake-llm/server.js';
import { isComposer, scriptEverything } from '../api/jobs-support.js';
import { runCli, runCliInTty, stripAnsi } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase } from '../support/pg.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * Background jobs through real processes: the CLI's --async/--wait and `service jobs`, a
 * server killed with SIGKILL mid-job (the job completes after the restart, in both storages),
 * and two servers sharing one PostgreSQL queue without running a job twice.
 */

const hasPg = await requirePostgres('job processes on PostgreSQL');

let fake: FakeLlm;
let dir: { path: string; remove(): Promise<void> };
let database: TestDatabase | null = null;
const servers: ServerHandle[] = [];
const clients: ServiceClient[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  dir = await tempDir('cli-jobs-');
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop('SIGKILL')));
  await Promise.all(clients.splice(0).map((c) => c.close()));
  fake.reset();
});
afterAll(async () => {
  await fake.close();
  await dir.remove();
  await database?.drop();
});

function llmEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    SERVICE_LLM_PROVIDER: 'provider_a',
    SERVICE_LLM_BASE_URL: fake.openaiBaseUrl,
    LLM_PROVIDER_A_API_KEY: 'test-key-a',
    SERVICE_RATE_LIMIT_EXPENSIVE: '1000',
    SERVICE_JOB_POLL_INTERVAL: '0.2',
    ...extra,
  };
}

async function serve(dataPath: string, env: Record<string, string> = {}): Promise<ServerHandle> {
  const server = await startServer({ dataPath, env: llmEnv(env) });
  servers.push(server);
  return server;
}

function jobsOf(server: ServerHandle): JobsClient {
  const client = new ServiceClient({ url: server.url });
  clients.push(client);
  return new JobsClient(client);
}

async function pgEnv(prefix: string): Promise<Record<string, string>> {
  database ??= await createTestDatabase('cli_jobs');
  const schema = await createMigratedSchema(database, prefix);
  return { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: schema.url, SERVICE_AUTH_MODE: 'dev', SERVICE_ALLOW_NO_AUTH: 'true' };
}

const TASK = 'Read orders.csv, total them per customer and write totals.md';
const stages = { stages: [{ name: 'load', task: 'load orders', reads: ['orders.csv'], writes: ['rows.json'] }, { name: 'sum', task: 'sum rows', reads: ['rows.json'], writes: ['totals.md'] }] };

describe('service CLI with background jobs', () => {
  it('--async prints a job id; jobs wait/get/list/cancel follow it; --wait prints the synchronous result', async () => {
    const server = await serve(join(dir.path, 'cli'));
    scriptEverything(fake);
    const cli = (args: string[]) => runCli([...args, '--url', server.url]);

    const submitted = await cli(['compose', TASK, '--async', '--json']);
    expect(submitted.code, submitted.stderr).toBe(0);
    const { job_id: id, status } = JSON.parse(submitted.stdout) as { job_id: string; status: string };
    expect(status).toBe('pending');

    const waited = await cli(['jobs', 'wait', id, '--json']);
    expect(waited.code, waited.stderr).toBe(0);
    const job = JSON.parse(waited.stdout);
    expect(job).toMatchObject({ job_id: id, operation: 'compose', status: 'completed', attempts: 1 });
    const sync = await cli(['compose', TASK, '--json']);
    expect(job.result).toEqual(JSON.parse(sync.stdout));
    expect(JSON.parse((await cli(['jobs', 'get', id, '--json'])).stdout)).toEqual(job);

    const listed = JSON.parse((await cli(['jobs', 'list', '--status', 'completed', '--json'])).stdout);
    expect(listed.jobs.map((j: { job_id: string }) => j.job_id)).toEqual([id]);
    const refused = await cli(['jobs', 'cancel', id]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/completed; only pending jobs can be cancelled/);
    expect((await cli(['jobs', 'get', 'nosuchjob'])).code).toBe(4);

    const aging = await cli(['aging', '--wait', '--json', '--yes']);
    expect(aging.code, aging.stderr).toBe(0);
    expect(JSON.parse(aging.stdout)).toEqual({ aged: 0, pruned: 0, remaining: 0, dry_run: false });
    const decay = await cli(['feedback', 'decay', '--wait', '--json']);
    expect(JSON.parse(decay.stdout)).toEqual({ decayed: 0, pruned: 0 });

    const evaluated = await cli(['evaluate', '--code', 'def avg(xs): return sum(xs) / len(xs)', '--num-evals', '2', '--wait', '--json']);
    expect(evaluated.code, evaluated.stderr).toBe(0);
    expect(JSON.parse(evaluated.stdout)).toMatchObject({ median_score: 6, scores: [expect.any(Object), expect.any(Object)] });
    expect((await cli(['evaluate', '--batch', '-', '--async'])).code).toBe(2);
    const rollup = JSON.parse((await cli(['analytics', 'rollup', 'daily', '--async', '--json'])).stdout) as { job_id: string };
    expect(JSON.parse((await cli(['jobs', 'wait', rollup.job_id, '--json'])).stdout)).toMatchObject({ operation: 'analytics_rollup', status: 'completed', result: { window: 'daily' } });
    const retention = await cli(['governance', 'retention', 'apply', '--dry-run', '--wait', '--json']);
    expect(JSON.parse(retention.stdout)).toEqual({ purged_count: 0, dry_run: true });

    // A person at a terminal: a spinner while waiting, then the usual human rendering.
    const tty = await runCliInTty(['compose', TASK, '--wait', '--url', server.url]);
    expect(tty.code, tty.output).toBe(0);
    expect(stripAnsi(tty.output)).toContain('waiting for the compose job');
    expect(stripAnsi(tty.output)).toMatch(/load\s+sales\.csv\s+rows\.json/);
  }, 120_000);

  it('import --async and --wait run the import as a job with the synchronous totals', async () => {
    const server = await serve(join(dir.path, 'import'));
    const file = join(dir.path, 'records.json');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(file, JSON.stringify({ records: [{ task: 'Compress logs older than a week', code: 'gzip old/*.log', eval_score: 7 }] }));
    const waited = await runCli(['import', file, '--wait', '--json', '--url', server.url]);
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toEqual({ imported: 1, skipped: 0, total: 1 });
    const queued = await runCli(['import', file, '--async', '--json', '--url', server.url]);
    const { job_id } = JSON.parse(queued.stdout) as { job_id: string };
    const job = await jobsOf(server).wait(job_id);
    expect(job.result).toEqual({ imported: 1, skipped: 0, total: 1 });
  });
});

/** The first compose call hangs (the server gets killed meanwhile); later ones answer at once. */
function hangFirstCompose(): void {
  let composes = 0;
  fake.script((call) => (isComposer(call) && composes++ === 0 ? reply.json(stages, { delayMs: 60_000 }) : reply.json(stages)));
}

async function killMidJobAndRestart(dataPath: string, env: Record<string, string>): Promise<void> {
  hangFirstCompose();
  const first = await serve(dataPath, env);
  const id = (await jobsOf(first).submit('compose', { task: TASK })).job_id;
  // Running for certain: the composer call has reached the LLM and is waiting for its reply.
  while (fake.chatRequests().filter((r) => isComposer(r.call!)).length === 0) await new Promise((r) => setTimeout(r, 20));
  expect((await jobsOf(first).get(id)).status).toBe('running');
  await first.stop('SIGKILL');

  const second = await serve(dataPath, env);
  const job = await jobsOf(second).wait(id);
  expect(job).toMatchObject({ status: 'completed', attempts: 2, error: null });
  expect(job.result).toMatchObject({ task: TASK, valid: true });
  // Two runs reached the LLM (the interrupted one and the retry); only the retry's result counts.
  expect(fake.chatRequests().filter((r) => isComposer(r.call!))).toHaveLength(2);
  expect((await jobsOf(second).list()).count).toBe(1);
}

describe('a server killed with SIGKILL while a job runs', () => {
  it('JSON storage: the restarted server runs the job again and it completes once', async () => {
    await killMidJobAndRestart(join(dir.path, 'kill-json'), {});
  });

  it.skipIf(!hasPg)('PostgreSQL: the job goes back to pending once its heartbeat is stale, then completes', async () => {
    await killMidJobAndRestart(join(dir.path, 'kill-pg'), { ...(await pgEnv('kill')), SERVICE_JOB_STALE_SECONDS: '1' });
  });
});

describe.skipIf(!hasPg)('two server processes on one PostgreSQL queue', () => {
  it('run every job exactly once between them', async () => {
    const env = { ...(await pgEnv('shared')), SERVICE_JOB_MAX_CONCURRENT: '2' };
    const [a, b] = [await serve(join(dir.path, 'pa'), env), await serve(join(dir.path, 'pb'), env)];
    scriptEverything(fake, { delayMs: 100 });
    const tasks = Array.from({ length: 10 }, (_, i) => `Job number ${i}: read input${i}.csv and write out${i}.md`);
    const ids: string[] = [];
    for (const [i, task] of tasks.entries()) ids.push((await jobsOf(i % 2 ? a : b).submit('compose', { task })).job_id);
    for (const id of ids) expect((await jobsOf(a).wait(id)).status).toBe('completed');
    const prompts = fake.chatRequests().filter((r) => isComposer(r.call!)).map((r) => r.call!.prompt);
    for (const task of tasks) expect(prompts.filter((p) => p.includes(`<task>\n${task}\n</task>`))).toHaveLength(1);
  });
});
