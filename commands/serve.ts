import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { loadConfig, type Config } from '../src/config/index.js';
import { action, ioOf, type Io } from './shared/context.js';
import { ExitCode } from './shared/exit-codes.js';
import { integerIn } from './shared/options.js';
import { nextSignal } from './shared/signals.js';
import { announceListening, isClusterWorker, resolveWorkerCount, superviseWorkers, workerStopRequest } from './shared/workers.js';

interface ServeOptions {
  host?: string;
  port?: number;
  workers?: number;
}

export function register(program: Command): void {
  program
    .command('serve')
    .description('start the HTTP server (configured by SERVICE_* environment variables)')
    .option('--host <host>', 'interface to listen on (default: SERVICE_HOST or 127.0.0.1)')
    .option('--port <port>', 'port to listen on, 0 for any free port (default: SERVICE_PORT or 8000)', integerIn(0, 65535))
    .option(
      '--workers <n>',
      'server processes sharing the port (default: 1 for JSON storage, which allows no more; one per core for PostgreSQL)',
      integerIn(1, 256),
    )
    .action(action(async (opts: ServeOptions, command: Command) => {
      const io = ioOf(command);
      if (isClusterWorker()) return serveOneProcess(io, opts, { worker: true });
      // Listen for signals before the slow start-up (model load) so an early SIGTERM still
      // ends in an orderly shutdown rather than a kill.
      const stop = nextSignal();
      try {
        const config = loadConfig();
        const workers = resolveWorkerCount(opts.workers, config.storage.kind);
        if (workers === 1) return await serveOneProcess(io, opts, { worker: false, stop: stop.received });
        return await superviseWorkers({ count: workers, stdout: io.stdout, stderr: io.stderr, stopSignal: stop.received });
      } finally {
        stop.dispose();
      }
    }));
}

/**
 * One whole server in this process. As a cluster worker it reports its address to the primary
 * (which prints the one `listening on` line) and drains when the primary asks.
 */
async function serveOneProcess(io: Io, opts: ServeOptions, role: { worker: true } | { worker: false; stop: Promise<string> }): Promise<number> {
  const workerStop = role.worker ? workerStopRequest() : null;
  const stopped = workerStop?.received ?? (role as { stop: Promise<string> }).stop;
  try {
    const config = withServerAddress(loadConfig(), opts);
    // Loaded here, not at the top: client commands should not pay for Fastify and the model runtime.
    const [{ createApp }, { buildServer }] = await Promise.all([import('../src/app.js'), import('../server/app.js')]);
    const app = await createApp(config);
    let server;
    try {
      server = await buildServer(app);
      await server.listen({ host: config.http.server.host, port: config.http.server.port });
    } catch (err) {
      await server?.close().catch(() => undefined);
      await app.close();
      throw err;
    }
    const url = urlOf(server.server.address() as AddressInfo);
    if (role.worker) announceListening(url);
    else io.stdout.write(`listening on ${url}\n`);

    const reason = await stopped;
    const who = role.worker ? `worker ${process.pid}: ` : '';
    io.stderr.write(`${who}${reason} received: no new connections, draining in-flight requests\n`);
    // Fastify's close stops accepting, lets in-flight requests finish, then runs onClose hooks.
    await server.close();
    await app.close();
    if (!role.worker) io.stderr.write('server stopped\n');
    return ExitCode.OK;
  } finally {
    workerStop?.dispose();
  }
}

function withServerAddress(config: Config, opts: ServeOptions): Config {
  // Flags win over SERVICE_HOST / SERVICE_PORT; the rest of the frozen config is shared as is.
  return {
    ...config,
    http: { ...config.http, server: { ...config.http.server, host: opts.host ?? config.http.server.host, port: opts.port ?? config.http.server.port } },
  };
}

function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
