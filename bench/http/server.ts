import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../args.js';
import { RELAXED_SIMD_FLAG } from '../../src/adapters/storage/json/engine/int8-kernel.js';
import { processCpu } from './proc-cpu.js';

/** Ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
/** Rate limits out of the way: the benchmark measures the server, not the limiter. */
const UNLIMITED = String(1_000_000_000);
/** Characters of the server's stderr kept for an error message. */
const STDERR_KEPT = 16_384;

export interface ServedStore {
  url: string;
  pid: number;
  /** CPU seconds (user + system) used so far by the server and its cluster workers. */
  cpuSeconds(): number;
  /** Resident memory (VmRSS) of the server and its workers, in bytes. */
  rssBytes(): number;
  /** Processes serving requests: the cluster workers, or the server itself when it has none. */
  servingProcesses(): number;
  /** SIGTERM (drain), then wait for the exit. */
  stop(): Promise<void>;
}

/** VmRSS of one process in bytes (0 when it is gone). */
function processRss(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Direct children of `pid` (the cluster workers), read from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/**
 * Starts `service serve --port 0` on the store described by `storeEnv` (dev auth, local
 * embeddings, no LLM, rate limits raised) and resolves once it prints its address.
 */
export function startServe(
  storeEnv: Record<string, string>,
  opts: { modelPath: string; workers?: number; profileDir?: string; logLevel: string; root?: string },
): Promise<ServedStore> {
  const root = opts.root ?? repoRoot();
  const nodeArgs = opts.profileDir ? ['--cpu-prof', '--cpu-prof-dir', opts.profileDir] : [];
  // A bench started with Node 20's relaxed SIMD flag serves with it too (the kernel it reports).
  if (process.execArgv.includes(RELAXED_SIMD_FLAG)) nodeArgs.push(RELAXED_SIMD_FLAG);
  const args = [...nodeArgs, join(root, 'bin', 'service.js'), 'serve', '--port', '0'];
  if (opts.workers !== undefined && storeEnv.SERVICE_STORAGE === 'postgres') args.push('--workers', String(opts.workers));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SERVICE_')) env[k] = v;
  Object.assign(env, {
    ...storeEnv,
    SERVICE_AUTH_MODE: 'dev',
    SERVICE_ALLOW_NO_AUTH: 'true',
    SERVICE_LOCAL_EMBEDDINGS: '1',
    SERVICE_EMBEDDING_MODEL_PATH: opts.modelPath,
    SERVICE_LLM_PROVIDER: 'none',
    SERVICE_LOG_LEVEL: opts.logLevel,
    SERVICE_RATE_LIMIT_DEFAULT: UNLIMITED,
    SERVICE_RATE_LIMIT_EXPENSIVE: UNLIMITED,
    SERVICE_RATE_LIMIT_PER_KEY: UNLIMITED,
  });
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    // At info the server logs a line per request: keep only the tail, for a failed start's message.
    child.stderr!.setEncoding('utf8').on('data', (s: string) => { stderr = (stderr + s).slice(-STDERR_KEPT); });
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match) resolve(served(child, match[1]));
    });
    child.once('exit', (code) => reject(new Error(`service serve exited (${code}) before listening:\n${stderr}`)));
  });
}

function served(child: ChildProcess, url: string): ServedStore {
  const pid = child.pid!;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url,
    pid,
    cpuSeconds: () => [pid, ...childrenOf(pid)].reduce((sum, p) => sum + processCpu(p), 0),
    rssBytes: () => [pid, ...childrenOf(pid)].reduce((sum, p) => sum + processRss(p), 0),
    servingProcesses: () => Math.max(1, childrenOf(pid).length),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
