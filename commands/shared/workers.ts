import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { ExitCode, UsageError } from './exit-codes.js';
import type { OutStream } from './context.js';

/**
 * `service serve --workers N`: N server processes on one port (node:cluster). The primary
 * only supervises: it forks the workers, prints the address once all of them listen,
 * replaces a worker that dies, and on SIGTERM/SIGINT asks every worker to drain and waits
 * for all of them. Each worker is a whole server with its own pool, embedder and (per the
 * spec) its own in-memory rate limits.
 */

/** Worker → primary: this worker accepts connections at `url`. */
interface ListeningMessage { type: 'service:listening'; url: string }
/** Primary → worker: stop accepting, drain in-flight requests, exit. */
const DRAIN_MESSAGE = { type: 'service:drain' } as const;

/** Replacements that die before listening, in a row, after which the primary gives up. */
const MAX_FAILED_REPLACEMENTS = 3;

/**
 * The number of processes to run: the flag, else 1 for JSON storage and one per core for
 * PostgreSQL. JSON storage keeps its single-writer lock on the data path, so more than one
 * process could never open it: refused up front with a message rather than N-1 crashes.
 */
export function resolveWorkerCount(flag: number | undefined, storage: 'json' | 'postgres', cores = availableParallelism()): number {
  if (storage === 'json') {
    if (flag !== undefined && flag > 1) {
      throw new UsageError(
        `--workers ${flag}: JSON storage allows one server process (it holds a single-writer lock on SERVICE_DATA_PATH); ` +
          'use --workers 1, or SERVICE_STORAGE=postgres for several workers',
      );
    }
    return 1;
  }
  return flag ?? Math.max(1, cores);
}

export function isClusterWorker(): boolean {
  return cluster.isWorker;
}

/** In a worker: tells the primary where this worker listens. */
export function announceListening(url: string): void {
  const message: ListeningMessage = { type: 'service:listening', url };
  process.send?.(message);
}

/**
 * In a worker: resolves when the primary asks for a drain, or on SIGTERM sent to this worker
 * alone. SIGINT is ignored: a Ctrl-C reaches the whole process group, and the primary relays
 * it as one drain request (a second signal would otherwise kill the worker mid-drain).
 */
export function workerStopRequest(): { received: Promise<string>; dispose(): void } {
  let onMessage: (m: unknown) => void = () => undefined;
  const onSigterm = () => onMessage(DRAIN_MESSAGE);
  const ignoreSigint = () => undefined;
  const received = new Promise<string>((resolve) => {
    onMessage = (m: unknown) => {
      if ((m as { type?: unknown } | null)?.type !== DRAIN_MESSAGE.type) return;
      dispose();
      resolve('drain request');
    };
    process.on('message', onMessage);
    process.once('SIGTERM', onSigterm);
    process.on('SIGINT', ignoreSigint);
  });
  const dispose = () => {
    process.removeListener('message', onMessage);
    process.removeListener('SIGTERM', onSigterm);
    process.removeListener('SIGINT', ignoreSigint);
  };
  return { received, dispose };
}

export interface SuperviseOptions {
  count: number;
  stdout: OutStream;
  stderr: OutStream;
  /** Resolves with the signal that asks the whole server to stop. */
  stopSignal: Promise<string>;
}

/** Runs in the primary until every worker has exited after a stop; returns the exit code. */
export function superviseWorkers(opts: SuperviseOptions): Promise<number> {
  const { count, stdout, stderr } = opts;
  const listening = new Set<Worker>();
  let announced = false;
  let stopping = false;
  let failedReplacements = 0;
  let exitCode: number = ExitCode.OK;

  return new Promise<number>((resolve) => {
    const finishIfEmpty = () => {
      if (Object.keys(cluster.workers ?? {}).length > 0) return;
      cluster.removeAllListeners('exit');
      cluster.removeAllListeners('message');
      stderr.write('server stopped\n');
      resolve(exitCode);
    };
    const stopAll = (reason: string) => {
      if (stopping) return;
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
      stderr.write(`${reason}: no new connections, draining in-flight requests in ${workers.length} worker(s)\n`);
      for (const worker of workers) {
        if (worker.isConnected()) worker.send(DRAIN_MESSAGE);
        else worker.process.kill('SIGTERM');
      }
      finishIfEmpty();
    };

    cluster.on('message', (worker, message: unknown) => {
      const m = message as Partial<ListeningMessage> | null;
      if (m?.type !== 'service:listening' || typeof m.url !== 'string') return;
      listening.add(worker);
      failedReplacements = 0;
      stderr.write(`worker ${worker.process.pid} listening\n`);
      if (!announced && listening.size >= count) {
        announced = true;
        stdout.write(`listening on ${m.url}\n`);
      }
    });

    const onExit = (worker: Worker, code: number, signal: string) => {
      const wasListening = listening.delete(worker);
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (stopping) {
        stderr.write(`worker ${worker.process.pid} exited (${how})\n`);
        if (code !== 0 || signal) exitCode = ExitCode.FAILURE;
        finishIfEmpty();
        return;
      }
      // A worker that never listened failed its start-up (configuration, database, model):
      // the next one would fail the same way, so stop instead of forking in a loop.
      if (!announced || (!wasListening && ++failedReplacements >= MAX_FAILED_REPLACEMENTS)) {
        stderr.write(`worker ${worker.process.pid} exited (${how}) before listening; stopping the server\n`);
        exitCode = code && code > 0 ? code : ExitCode.FAILURE;
        stopAll('start-up failed');
        return;
      }
      stderr.write(`worker ${worker.process.pid} died (${how}); starting a replacement\n`);
      cluster.fork();
    };
    cluster.on('exit', (worker, code, signal) => {
      // A killed worker's exit can be seen before its IPC channel closes, and until then the
      // primary may still hand it connections; act once cluster has dropped it (on disconnect).
      if (worker.process.connected) worker.process.once('disconnect', () => onExit(worker, code, signal));
      else onExit(worker, code, signal);
    });

    void opts.stopSignal.then((signal) => stopAll(`${signal} received`));
    for (let i = 0; i < count; i++) cluster.fork();
  });
}
