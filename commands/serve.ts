import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { loadConfig, type Config } from '../src/config.js';
import { action, ioOf } from './shared/context.js';
import { ExitCode } from './shared/exit-codes.js';
import { integerIn } from './shared/options.js';
import { nextSignal } from './shared/signals.js';

interface ServeOptions {
  host?: string;
  port?: number;
}

export function register(program: Command): void {
  program
    .command('serve')
    .description('start the HTTP server (configured by SERVICE_* environment variables)')
    .option('--host <host>', 'interface to listen on (default: SERVICE_HOST or 127.0.0.1)')
    .option('--port <port>', 'port to listen on, 0 for any free port (default: SERVICE_PORT or 8000)', integerIn(0, 65535))
    .action(action(async (opts: ServeOptions, command: Command) => {
      const io = ioOf(command);
      // Listen for signals before the slow start-up (model load) so an early SIGTERM still
      // ends in an orderly shutdown rather than a kill.
      const stop = nextSignal();
      try {
        const config = withServerAddress(loadConfig(), opts);
        // Loaded here, not at the top: client commands should not pay for Fastify and the model runtime.
        const [{ createApp }, { buildServer }] = await Promise.all([import('../src/app.js'), import('../server/app.js')]);
        const app = await createApp(config);
        let server;
        try {
          server = await buildServer(app);
          await server.listen({ host: config.server.host, port: config.server.port });
        } catch (err) {
          await server?.close().catch(() => undefined);
          await app.close();
          throw err;
        }
        io.stdout.write(`listening on ${urlOf(server.server.address() as AddressInfo)}\n`);

        const signal = await stop.received;
        io.stderr.write(`${signal} received: no new connections, draining in-flight requests\n`);
        // Fastify's close stops accepting, lets in-flight requests finish, then runs onClose hooks.
        await server.close();
        await app.close();
        io.stderr.write('server stopped\n');
        return ExitCode.OK;
      } finally {
        stop.dispose();
      }
    }));
}

function withServerAddress(config: Config, opts: ServeOptions): Config {
  // Flags win over SERVICE_HOST / SERVICE_PORT; the rest of the frozen config is shared as is.
  return {
    ...config,
    server: { ...config.server, host: opts.host ?? config.server.host, port: opts.port ?? config.server.port },
  };
}

function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
