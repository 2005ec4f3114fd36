/**
 * Rate limits hold across processes on one PostgreSQL database (docs/behavior.md
 * "Rate limits"): two and three real `service serve` processes on ports of their own, as separate
 * hosts would be, and a client spreading its requests over them. Each process answers its
 * requests one at a time while the processes run at once, so a process that has answered 429
 * holds no grants any more (its pre-check spends held grants before asking): once every process
 * has refused, every grant taken from the shared count was spent, and the 2xx answers are
 * exactly the limit. The pre-check's only deviation (grants held by a process the client stops
 * using, at most MAX_GRANT − 1 per process) is thus ruled out here, not tolerated.
 * The window is set far longer than a run (clock-aligned: the current one spans decades).
 *
 * Then the database goes away mid-test (a TCP proxy in front of it is closed): each process
 * decides alone with its own count of the window, every answer is 200 or 429, none stops; once
 * it is back the shared count decides again.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { adminQuery, createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';
import { startServer, type ServerHandle } from '../support/server.js';
import { FALLBACK_MS } from '../../src/adapters/storage/postgres/rate-limits.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const hasPg = await requirePostgres('shared rate limits');
const built = existsSync(join(BIN, '..', '..', 'dist', 'commands', 'main.js'));
if (!built) {
  if (process.env.CI && process.env.CI !== 'false') throw new Error('dist/ is missing: `npm test` builds it first');
  console.warn('\n[skip] shared rate limits: run `npm run build` first (the test spawns bin/service.js).\n');
}

const KEY_LIMITED = 'shared-limit-key-one-0123456789abcdef';
const KEY_IP_TEST = 'shared-limit-key-two-0123456789abcdef';
const PER_KEY = 30;
const PER_IP = 20;
/** Decades: the clock-aligned window a run falls in never turns during it. */
const WINDOW_SECONDS = '1000000000';

interface Answer {
  status: number;
  headers: Headers;
}

let ipCounter = 0;
/** An address of its own per call (the servers trust the loopback proxy's X-Forwarded-For). */
function freshIp(): string {
  ipCounter += 1;
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

async function access(server: ServerHandle, key: string, ip: string): Promise<Answer> {
  const res = await fetch(`${server.url}/v1/access`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': ip } });
  await res.arrayBuffer();
  return { status: res.status, headers: res.headers };
}

/**
 * Rounds of one request per server, sent to all servers at once, until every server has
 * answered 429 (capped, so a limit that does not hold fails instead of looping).
 */
async function spreadUntilEveryServerRefuses(servers: ServerHandle[], send: (s: ServerHandle) => Promise<Answer>, maxRounds: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  const refused = new Set<number>();
  for (let round = 0; round < maxRounds && refused.size < servers.length; round++) {
    const got = await Promise.all(servers.map((s) => send(s)));
    got.forEach((a, i) => {
      if (a.status === 429) refused.add(i);
    });
    answers.push(...got);
  }
  expect(refused.size, 'every server refused at last').toBe(servers.length);
  return answers;
}

function statuses(answers: Answer[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const a of answers) out[a.status] = (out[a.status] ?? 0) + 1;
  return out;
}

function serverEnv(url: string): Record<string, string> {
  return {
    SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: url,
    SERVICE_AUTH_MODE: 'env', SERVICE_API_KEYS: `${KEY_LIMITED},${KEY_IP_TEST}`,
    SERVICE_TRUSTED_PROXIES: '127.0.0.1',
    SERVICE_RATE_LIMIT_PER_KEY: String(PER_KEY), SERVICE_RATE_LIMIT_DEFAULT: String(PER_IP),
    SERVICE_RATE_LIMIT_WINDOW_SECONDS: WINDOW_SECONDS,
    // A slow answer on a busy test machine must not count as the database away (that rule has
    // its own test below, where the database really is away, and a unit test).
    SERVICE_RATE_LIMIT_DB_TIMEOUT_MS: '30000',
  };
}

async function startServers(count: number, env: Record<string, string>, dirs: { remove(): Promise<void> }[]): Promise<ServerHandle[]> {
  const made = await Promise.all(Array.from({ length: count }, () => tempDir('svc-pg-limits-')));
  dirs.push(...made);
  // One process each (serve's default for PostgreSQL is one per core): N servers are N processes.
  return Promise.all(made.map((d) => startServer({ dataPath: d.path, env, args: ['--workers', '1'] })));
}

describe.skipIf(!hasPg || !built).each([2, 3])('shared rate limits, %i serve processes on one database', (count) => {
  let db: TestDatabase;
  let schema: TestSchema;
  const dirs: { remove(): Promise<void> }[] = [];
  let servers: ServerHandle[] = [];

  beforeAll(async () => {
    db = await createTestDatabase(`shared_limits_${count}`);
    schema = await createMigratedSchema(db, 'limits');
    servers = await startServers(count, serverEnv(schema.url), dirs);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    for (const d of dirs) await d.remove();
    await db?.drop();
  });

  it(`per key: ${PER_KEY} answers 2xx in the window over all processes, then 429 with RateLimit-* and Retry-After`, async () => {
    // A new address per request: only the key's count can refuse.
    const answers = await spreadUntilEveryServerRefuses(servers, (s) => access(s, KEY_LIMITED, freshIp()), 40);
    expect(statuses(answers)).toEqual({ 200: PER_KEY, 429: answers.length - PER_KEY });
    for (const a of answers.filter((x) => x.status === 429)) {
      expect(a.headers.get('ratelimit-limit')).toBe(String(PER_KEY));
      expect(a.headers.get('ratelimit-remaining')).toBe('0');
      expect(a.headers.get('retry-after')).toBe(WINDOW_SECONDS);
    }
    const firstOk = answers[0];
    expect(firstOk.status).toBe(200);
    expect(firstOk.headers.get('ratelimit-limit')).not.toBeNull();
    // The shared row holds the limit and the refusals it counted: one row for the key.
    const rows = await adminQuery("SELECT hits FROM rate_limit_windows WHERE bucket LIKE 'key:%'", [], schema.url);
    expect(rows.rows).toHaveLength(1);
    expect((rows.rows[0] as { hits: number }).hits).toBeGreaterThan(PER_KEY);
    // One audit event for the window's first refusal, whichever process refused first.
    const audit = await adminQuery("SELECT count(*)::int AS n FROM audit_log WHERE kind = 'RATE_LIMITED' AND detail->>'bucket' = 'key'", [], schema.url);
    expect((audit.rows[0] as { n: number }).n).toBe(1);
  }, 120_000);

  it(`per IP: ${PER_IP} answers 2xx from one address over all processes`, async () => {
    const ip = freshIp();
    const answers = await spreadUntilEveryServerRefuses(servers, (s) => access(s, KEY_IP_TEST, ip), 40);
    expect(statuses(answers)).toEqual({ 200: PER_IP, 429: answers.length - PER_IP });
    for (const a of answers.filter((x) => x.status === 429)) expect(a.headers.get('ratelimit-limit')).toBe(String(PER_IP));
  }, 120_000);
});

describe.skipIf(!hasPg || !built)('shared rate limits, the database stopped mid-test', () => {
  let db: TestDatabase;
  let proxy: TcpProxy & { port: number };
  let schema: TestSchema;
  let target: URL;
  const dirs: { remove(): Promise<void> }[] = [];
  let servers: ServerHandle[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('shared_limits_down');
    schema = await createMigratedSchema(db, 'limits');
    target = new URL(schema.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    servers = await startServers(2, serverEnv(proxy.url(schema.url)), dirs);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await proxy?.close();
    for (const d of dirs) await d.remove();
    await db?.drop();
  });

  it('each process then decides alone with its own count of the window (200 or 429, never an error, no process ends); once the database is back the shared count decides again', async () => {
    const before = 10;
    // 10 requests per process through the shared count, all admitted.
    for (let round = 0; round < before; round++) {
      const got = await Promise.all(servers.map((s) => access(s, KEY_LIMITED, freshIp())));
      expect(got.map((a) => a.status)).toEqual(servers.map(() => 200));
    }
    await proxy.close();

    const after: Answer[] = [];
    for (let round = 0; round < PER_KEY; round++) after.push(...(await Promise.all(servers.map((s) => access(s, KEY_LIMITED, freshIp())))));
    // Each process has seen `before` + PER_KEY requests and admits up to PER_KEY of them on its own
    // count (grants it still held from the shared count are among those): the limit is per
    // process while the database is away.
    expect(statuses(after)).toEqual({ 200: servers.length * (PER_KEY - before), 429: servers.length * before });
    for (const s of servers) expect(s.child.exitCode).toBeNull();

    // The database back where it was: after FALLBACK_MS the processes ask the shared count
    // again, which still holds what it granted before the cut (what the processes admitted
    // alone was never written): the fleet admits exactly what it had left.
    const granted = await adminQuery("SELECT hits FROM rate_limit_windows WHERE bucket LIKE 'key:%'", [], schema.url);
    const left = PER_KEY - (granted.rows[0] as { hits: number }).hits;
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432), proxy.port);
    await new Promise((resolve) => setTimeout(resolve, FALLBACK_MS + 100));
    const back = await spreadUntilEveryServerRefuses(servers, (s) => access(s, KEY_LIMITED, freshIp()), 40);
    expect(statuses(back)).toEqual({ 200: left, 429: back.length - left });
  }, 120_000);
});

describe.skipIf(!hasPg || !built)('shared rate limits, serve --workers 2 (one port, two processes)', () => {
  let db: TestDatabase;
  const dirs: { remove(): Promise<void> }[] = [];
  let server: ServerHandle | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('shared_limits_workers');
    const schema = await createMigratedSchema(db, 'limits');
    const dir = await tempDir('svc-pg-limits-');
    dirs.push(dir);
    server = await startServer({ dataPath: dir.path, env: serverEnv(schema.url), args: ['--workers', '2'] });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    for (const d of dirs) await d.remove();
    await db?.drop();
  });

  it('the workers share the key\'s count: never more than the limit, at most the grants a worker still holds fewer', async () => {
    // Which worker answers is the primary's choice, so a worker may still hold grants when the
    // client stops: the pre-check's stated bound, MAX_GRANT − 1 per process (here grantSize
    // takes at most 3 of a limit of 30, so at most 2 per worker).
    const answers: Answer[] = [];
    for (let i = 0; i < PER_KEY * 3; i++) answers.push(await access(server!, KEY_LIMITED, freshIp()));
    const ok = answers.filter((a) => a.status === 200).length;
    expect(ok).toBeLessThanOrEqual(PER_KEY);
    expect(ok).toBeGreaterThanOrEqual(PER_KEY - 2 * 2);
    expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true);
    expect([...server!.stderr().matchAll(/^worker (\d+) listening$/gm)]).toHaveLength(2);
  }, 120_000);
});
