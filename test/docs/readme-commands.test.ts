/**
 * The command blocks of README.md and of every docs/ page run as written, from a fresh clone.
 * SLOW (several minutes: the quick start's `npm ci` and build).
 *
 * The test copies the checkout's files (tracked and new, not ignored: what a clone has, plus
 * uncommitted work) to a scratch folder and runs every command block there in order
 * (README.md first, then the docs/ pages in name order)
 * with bash -e -o pipefail, in a user's environment (no SERVICE_* or npm_* variables from
 * this run) with these set:
 *  - SERVICE_PORT / SERVICE_URL: a free port, so the quick start's server (a block marked
 *    `<!-- readme-test: server -->`, run in the background) and the later client commands meet
 *    on it, whatever else runs on this machine;
 *  - npm_config_prefix (+ its bin on PATH): a scratch global folder, so `npm link` and global
 *    installs change nothing outside the scratch folder.
 * A block marked `<!-- readme-test: skip: reason -->` is not run (the reasons are printed); any
 * other block that fails fails the test with its line, exit code and output.
 * Markers and parsing: test/support/readme-blocks.ts.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readmeBlocks, type Block } from '../support/readme-blocks.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** README.md first (its quick start starts the server the other blocks talk to), then docs/ by name. */
const DOCS = ['README.md', ...(await readdir(join(ROOT, 'docs'))).filter((n) => n.endsWith('.md')).sort().map((n) => `docs/${n}`)];
const PAGES = await Promise.all(DOCS.map(async (file) => ({ file, markdown: await readFile(join(ROOT, file), 'utf8') })));
/** Every page's blocks, in run order, each with the page it comes from. */
function allBlocks(): Array<Block & { file: string }> {
  return PAGES.flatMap(({ file, markdown }) => readmeBlocks(markdown, file).map((b) => ({ ...b, file })));
}
/** The longest a block may run (the quick start's npm ci and build on a busy machine). */
const BLOCK_TIMEOUT_MS = 10 * 60_000;

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** What a user's shell has: this process's environment without the test run's settings. */
function userEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(SERVICE_|LLM_PROVIDER_|OPENAI_|ANTHROPIC_|PAYMENT_|HF_|npm_|VITEST|NODE_OPTIONS$|INIT_CWD$|FORCE_COLOR$)/.test(name)) continue;
    env[name] = value;
  }
  return { ...env, NO_COLOR: '1', ...extra };
}

/** The commands of a block: a console block's are its `$ ` lines. */
function commandsOf(block: Block): string {
  if (block.language !== 'console') return block.code;
  return block.code.split('\n').filter((l) => l.startsWith('$ ')).map((l) => l.slice(2)).join('\n');
}

interface Outcome { code: number | null; signal: NodeJS.Signals | null; output: string }

function runBlock(code: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  return new Promise((done) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', code], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (s: string) => {
      output = (output + s).slice(-6000);
    };
    child.stdout.setEncoding('utf8').on('data', keep);
    child.stderr.setEncoding('utf8').on('data', keep);
    const timer = setTimeout(() => killGroup(child), BLOCK_TIMEOUT_MS);
    child.on('close', (exit, signal) => {
      clearTimeout(timer);
      done({ code: exit, signal, output });
    });
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** A server block, running in the background until stopped. */
interface Background { child: ChildProcess; output(): string; exited: Promise<void> }

function startBackground(code: string, cwd: string, env: NodeJS.ProcessEnv): Background {
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', code], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (s: string) => {
    output = (output + s).slice(-6000);
  };
  child.stdout!.setEncoding('utf8').on('data', keep);
  child.stderr!.setEncoding('utf8').on('data', keep);
  const exited = new Promise<void>((done) => child.on('close', () => done()));
  return { child, output: () => output, exited };
}

/** Resolves once GET <url>/v1/health answers 200; rejects if the server's block ends first. */
async function waitForHealth(url: string, server: Background): Promise<void> {
  let ended = false;
  void server.exited.then(() => (ended = true));
  const deadline = Date.now() + BLOCK_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (ended) throw new Error(`the server block ended before ${url} answered:\n${server.output()}`);
    const ok = await fetch(`${url}/v1/health`).then((r) => r.status === 200, () => false);
    if (ok) return;
    // Polls the condition (the server answering); npm ci and the build come first.
    await Promise.race([new Promise((r) => setTimeout(r, 500)), server.exited]);
  }
  throw new Error(`${url} did not answer within ${BLOCK_TIMEOUT_MS / 60_000} minutes:\n${server.output()}`);
}

/** The checkout as a clone has it (tracked and new files, not ignored ones) plus uncommitted work. */
async function copyCheckout(to: string): Promise<void> {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 })
    .toString().split('\0').filter(Boolean);
  for (const file of new Set(files)) {
    if (!existsSync(join(ROOT, file))) continue; // deleted in the work tree
    await cp(join(ROOT, file), join(to, file), { recursive: false, force: true, verbatimSymlinks: true });
  }
}

/** npx's folders for the scratch checkout (npx keeps one per package path it ran). */
async function removeNpxFolders(scratch: string): Promise<void> {
  const npx = join(process.env.npm_config_cache ?? join(homedir(), '.npm'), '_npx');
  for (const name of await readdir(npx).catch(() => [] as string[])) {
    const manifest = await readFile(join(npx, name, 'package.json'), 'utf8').catch(() => '');
    if (manifest.includes(scratch)) await rm(join(npx, name), { recursive: true, force: true });
  }
}

describe('README and docs command blocks: well-formed', () => {
  it('every fenced block has a language, markers are known and stand right before a command block', () => {
    const blocks = allBlocks();
    expect(PAGES.length).toBeGreaterThan(5);
    expect(blocks.length).toBeGreaterThan(0);
    // The quick start's server comes before the blocks that talk to it.
    expect(blocks.findIndex((b) => b.marker?.kind === 'server')).toBe(0);
  });
});

describe('README and docs command blocks: run as written (slow: npm ci, build and every block)', () => {
  let scratch: string | null = null;
  let server: Background | null = null;

  afterAll(async () => {
    if (server) {
      killGroup(server.child);
      await server.exited;
    }
    if (scratch) {
      await removeNpxFolders(scratch);
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it('every block not marked skip succeeds, from a fresh copy against a temporary server', async () => {
    scratch = await mkdtemp(join(tmpdir(), 'svc-readme-'));
    const checkout = join(scratch, 'checkout');
    const globalPrefix = join(scratch, 'npm-global');
    await mkdir(join(globalPrefix, 'bin'), { recursive: true });
    await copyCheckout(checkout);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = userEnv({
      SERVICE_PORT: String(port),
      SERVICE_URL: url,
      npm_config_prefix: globalPrefix,
      PATH: `${join(globalPrefix, 'bin')}${delimiter}${process.env.PATH ?? ''}`,
    });

    const failures: string[] = [];
    const skipped: string[] = [];
    for (const block of allBlocks()) {
      const code = commandsOf(block);
      if (block.marker?.kind === 'skip') {
        skipped.push(`${block.file}:${block.line} (${block.marker.reason})`);
        continue;
      }
      if (block.marker?.kind === 'server') {
        if (server) {
          killGroup(server.child);
          await server.exited;
        }
        server = startBackground(code, checkout, env);
        try {
          await waitForHealth(url, server);
        } catch (err) {
          failures.push(`${block.file}:${block.line} (server block):\n${code}\n${(err as Error).message}`);
          break; // the blocks after it talk to this server
        }
        continue;
      }
      const outcome = await runBlock(code, checkout, env);
      if (outcome.code !== 0) {
        failures.push(`${block.file}:${block.line} exited ${outcome.code ?? outcome.signal}:\n${code}\n--- output (end) ---\n${outcome.output}`);
      }
    }
    console.info(`README and docs blocks not run (marked skip):\n  ${skipped.join('\n  ')}`);
    expect(failures.join('\n\n')).toBe('');
  }, 40 * 60_000);
});
