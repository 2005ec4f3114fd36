/**
 * Throwaway PostgreSQL 15 clusters for tests that stop and start the server. Never the shared
 * 127.0.0.1:5432 one: test files run in parallel, and stopping it would break every other
 * PostgreSQL test running at that moment. Same binaries, same pgvector build.
 *
 * As root (CI) the cluster is made with Debian's cluster tools and restarted with
 * `pg_ctlcluster`, as an operator would; otherwise with initdb and pg_ctl in a temp dir.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const VERSION = '15';
const BIN = `/usr/lib/postgresql/${VERSION}/bin`;
const isRoot = process.getuid?.() === 0;
const hasDebianTools = existsSync('/usr/bin/pg_createcluster') && existsSync('/usr/bin/pg_ctlcluster');

/** 'fast' is a clean shutdown; 'immediate' kills the server like a crash (WAL replay on start). */
export type StopMode = 'fast' | 'immediate';

export interface TestCluster {
  readonly url: string;
  /** How it is restarted, for test names and messages. */
  readonly tool: string;
  start(): Promise<void>;
  stop(mode?: StopMode): Promise<void>;
  destroy(): Promise<void>;
}

/** True when a cluster can be made here; in CI a missing server is a failure, not a skip. */
export function canMakeCluster(label: string): boolean {
  if (existsSync(join(BIN, 'initdb')) && existsSync(join(BIN, 'pg_ctl'))) return true;
  const message = `PostgreSQL ${VERSION} server binaries not found in ${BIN}`;
  if (process.env.CI && process.env.CI !== 'false') throw new Error(`${message}: CI must provide them`);
  console.warn(`\n[skip] ${label}: ${message}.\n`);
  return false;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export async function createCluster(): Promise<TestCluster> {
  const port = await freePort();
  return isRoot && hasDebianTools ? DebianCluster.create(port) : PrivateCluster.create(port);
}

const urlFor = (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`;

class DebianCluster implements TestCluster {
  readonly tool = 'pg_ctlcluster';
  private constructor(
    private readonly name: string,
    readonly url: string,
  ) {}

  static async create(port: number): Promise<DebianCluster> {
    const name = `svc_test_${process.pid}_${randomBytes(3).toString('hex')}`;
    await run('pg_createcluster', [
      VERSION, name, '--port', String(port), '--start-conf', 'manual', '-o', 'shared_buffers=16MB',
      '--', '--auth=trust', '--no-sync',
    ], { timeout: 60_000 });
    const cluster = new DebianCluster(name, urlFor(port));
    try {
      await cluster.start();
    } catch (err) {
      await cluster.destroy().catch(() => undefined);
      throw err;
    }
    return cluster;
  }

  async start(): Promise<void> {
    await run('pg_ctlcluster', [VERSION, this.name, 'start'], { timeout: 60_000 });
  }

  async stop(mode: StopMode = 'fast'): Promise<void> {
    await run('pg_ctlcluster', [VERSION, this.name, 'stop', '-m', mode], { timeout: 60_000 });
  }

  async destroy(): Promise<void> {
    await run('pg_dropcluster', [VERSION, this.name, '--stop'], { timeout: 60_000 });
  }
}

/** Runs a server binary, as the postgres user when we are root (initdb refuses root). */
async function pgBin(cmd: string, args: string[]): Promise<void> {
  const [file, argv] = isRoot ? ['runuser', ['-u', 'postgres', '--', join(BIN, cmd), ...args]] : [join(BIN, cmd), args];
  await run(file, argv, { timeout: 60_000 });
}

class PrivateCluster implements TestCluster {
  readonly tool = 'pg_ctl';
  private constructor(
    private readonly dir: string,
    private readonly port: number,
  ) {}

  get url(): string {
    return urlFor(this.port);
  }

  static async create(port: number): Promise<PrivateCluster> {
    const dir = await mkdtemp(join(tmpdir(), 'svc-pg-cluster-'));
    if (isRoot) {
      const { stdout: uid } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      await chown(dir, Number(uid.trim()), Number(gid.trim()));
    }
    const cluster = new PrivateCluster(dir, port);
    await pgBin('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await cluster.start();
    return cluster;
  }

  async start(): Promise<void> {
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c shared_buffers=16MB`;
    await pgBin('pg_ctl', ['-D', join(this.dir, 'data'), '-l', join(this.dir, 'server.log'), '-o', opts, '-w', 'start']);
  }

  async stop(mode: StopMode = 'fast'): Promise<void> {
    await pgBin('pg_ctl', ['-D', join(this.dir, 'data'), '-m', mode, '-w', 'stop']);
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}
