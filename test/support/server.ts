import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { BIN } from './cli.js';
import { childEnv } from './env.js';

export interface ServerOptions {
  /** SERVICE_DATA_PATH of the child (a temp dir owned by the test). */
  dataPath: string;
  /** Extra environment over childEnv(); undefined removes a variable. */
  env?: Record<string, string | undefined>;
  /** Extra `serve` flags. */
  args?: string[];
  /** A command that runs the server, e.g. `['unshare', '--fork', '--pid', '--mount-proc']`. */
  wrap?: string[];
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServerHandle {
  /** http://127.0.0.1:<port>, parsed from the `listening on` line. */
  url: string;
  port: number;
  dataPath: string;
  child: ChildProcessWithoutNullStreams;
  /** Everything the child printed so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the child has exited. */
  exited: Promise<Exit>;
  /** Sends `signal` (SIGTERM by default) and waits for the exit. Safe to call after exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
  /** Resolves once stderr contains `text` (or rejects if the child exits first). */
  waitForStderr(text: string): Promise<void>;
}

const LISTENING = /^listening on (http:\/\/\S+:(\d+))$/m;

/**
 * Starts `service serve --port 0` as a real child process and resolves once it prints its
 * address. Rejects with the child's stderr if it exits first (config error, locked path…).
 */
export function startServer(opts: ServerOptions): Promise<ServerHandle> {
  const command = [...(opts.wrap ?? []), process.execPath, BIN, 'serve', '--port', '0', ...(opts.args ?? [])];
  const child = spawn(command[0], command.slice(1), {
    env: childEnv({ SERVICE_DATA_PATH: opts.dataPath, ...opts.env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  const watchers = new Set<() => void>();
  // A copy, because a watcher that is satisfied removes itself while we iterate.
  const notify = () => [...watchers].forEach((w) => w());
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
    notify();
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
    notify();
  });
  let exit: Exit | null = null;
  const exited = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
      notify();
    });
  });

  /** Re-checks `test` whenever the child prints or exits. */
  const until = <T>(test: () => T | undefined, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const value = test();
        if (value !== undefined) {
          watchers.delete(check);
          resolve(value);
        } else if (exit) {
          watchers.delete(check);
          reject(new Error(`server exited (code ${exit.code}, signal ${exit.signal}) before ${what}\nstderr:\n${stderr}`));
        }
      };
      watchers.add(check);
      check();
    });

  const handle = (url: string, port: number): ServerHandle => ({
    url,
    port,
    dataPath: opts.dataPath,
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async stop(signal = 'SIGTERM') {
      if (!exit) child.kill(signal);
      return exited;
    },
    waitForStderr: (text) => until(() => (stderr.includes(text) ? true : undefined), `printing "${text}"`).then(() => undefined),
  });

  return until(() => {
    const m = LISTENING.exec(stdout);
    return m ? handle(m[1], Number(m[2])) : undefined;
  }, 'listening');
}
