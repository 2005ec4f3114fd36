/**
 * A loopback TCP proxy in front of PostgreSQL that can cut its connections, to cover the
 * faults PostgreSQL itself never sends: a TCP reset in the middle of a statement (a network
 * blip, a load balancer or pooler dropping the connection). PostgreSQL's own terminations
 * (pg_terminate_backend) arrive as a FATAL message followed by a clean close instead.
 *
 * It reads the frontend protocol just enough to see where each client message starts: the
 * first message of a connection (startup, or an SSL/GSS request) has no type byte, every
 * later one is a type byte and a 4-byte length.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

/** Query ('Q') and Execute ('E') messages run a statement. */
const STATEMENT_TYPES = new Set(['Q', 'E']);

interface Link {
  client: Socket;
  server: Socket;
}

export interface TcpProxy {
  /** The PostgreSQL URL `target` rewritten to go through the proxy. */
  url(target: string): string;
  /** Connections open through the proxy now. */
  readonly open: number;
  /** Statements cut so far by cutNextStatements. */
  readonly cut: number;
  /**
   * Arms a cut: each of the next `count` statements is passed on to PostgreSQL, then both of
   * its connection's sockets are reset before any answer comes back (the server may have run it).
   */
  cutNextStatements(count: number): void;
  /** Resets every open connection at once (both sides). */
  resetAll(): void;
  close(): Promise<void>;
}

/** Tracks message boundaries in the client → server byte stream of one connection. */
class FrontendReader {
  private started = false;
  private header = Buffer.alloc(0);
  private remaining = 0;

  /** Feeds a chunk; returns true when a statement message starts in it. */
  feed(chunk: Buffer): boolean {
    let statement = false;
    let at = 0;
    while (at < chunk.length) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - at);
        this.remaining -= take;
        at += take;
        continue;
      }
      const headerSize = this.started ? 5 : 4;
      const need = headerSize - this.header.length;
      const piece = chunk.subarray(at, at + need);
      this.header = Buffer.concat([this.header, piece]);
      at += piece.length;
      if (this.header.length < headerSize) break;
      const length = this.started ? this.header.readInt32BE(1) : this.header.readInt32BE(0);
      if (this.started && STATEMENT_TYPES.has(String.fromCharCode(this.header[0]))) statement = true;
      // The length counts itself (4 bytes) but not the type byte.
      this.remaining = Math.max(0, length - 4);
      this.header = Buffer.alloc(0);
      this.started = true;
    }
    return statement;
  }
}

/** `listenPort`: 0 for any free port, or a closed proxy's port to bring the database "back" where it was. */
export async function startTcpProxy(targetHost: string, targetPort: number, listenPort = 0): Promise<TcpProxy & { port: number }> {
  const links = new Set<Link>();
  let armed = 0;
  let cut = 0;

  const reset = (link: Link) => {
    links.delete(link);
    link.client.resetAndDestroy();
    link.server.resetAndDestroy();
  };

  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, targetHost);
    const link: Link = { client, server: upstream };
    links.add(link);
    const reader = new FrontendReader();
    const drop = () => {
      if (!links.delete(link)) return;
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('data', (chunk: Buffer) => {
      const statement = reader.feed(chunk);
      upstream.write(chunk);
      if (statement && armed > 0) {
        armed -= 1;
        cut += 1;
        // Once the statement is on its way to the server, reset both ends.
        upstream.write(Buffer.alloc(0), () => reset(link));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('proxy has no address');
  const port = address.port;

  return {
    port,
    url(target: string) {
      const u = new URL(target);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    get open() {
      return links.size;
    },
    get cut() {
      return cut;
    },
    cutNextStatements(count: number) {
      armed += count;
    },
    resetAll() {
      for (const link of [...links]) reset(link);
    },
    async close() {
      for (const link of [...links]) reset(link);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
