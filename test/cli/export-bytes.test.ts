/**
 * Issue 25 rows 5 and 6: `service export` backups are byte-exact wherever they go.
 * - stdout: bytes pass through as they arrive (a character split between two chunks must not
 *   turn into U+FFFD), and a full stdout is waited for ('drain'), never buffered without end;
 * - --output: a regular file is replaced atomically, a symlink is written through, a FIFO or a
 *   device node is written in place (never replaced); what cannot hold an output is refused
 *   with exit 2.
 * Real processes: two servers (source, fresh target) and the CLI as a child whose stdout is a
 * file descriptor, as `service export --ndjson > backup.ndjson` gives it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { lstat, mkdir, open, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../commands/main.js';
import { BIN, runCli } from '../support/cli.js';
import { childEnv, tempDir } from '../support/env.js';
import { fakeIo } from '../support/fake-io.js';
import { startServer, type ServerHandle } from '../support/server.js';

// Characters of 2, 3 and 4 UTF-8 bytes, and combining marks (a base letter + U+0301 / U+0308).
const ALPHABET = ['日', '本', '語', '漢', '字', '한', '글', '😀', '🦊', '👩‍💻', 'é', 'ß', 'ж', 'e\u0301', 'o\u0308', 'ก', '中'];
// Code lengths (characters) from tiny to larger than a socket read, so chunk boundaries fall
// inside characters at many offsets.
const SIZES = [1, 2, 3, 7, 64, 333, 1_000, 4_099, 16_001, 40_000, 70_003];
const RECORDS = 66;

/** Deterministic text of `length` alphabet picks (LCG: the same data on every run). */
function multiByteText(seed: number, length: number): string {
  let state = seed * 2654435761 + 1;
  let out = '';
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    out += ALPHABET[state % ALPHABET.length];
  }
  return out;
}

const importRecords = Array.from({ length: RECORDS }, (_, i) => ({
  task: `${multiByteText(i + 1, 20 + (i % 13) * 37)} 任务 ${i}`,
  code: `// ${i}\n${multiByteText(i + 1000, SIZES[i % SIZES.length] + i)}`,
  output: i % 3 === 0 ? multiByteText(i + 5000, 50 + i) : undefined,
  eval_score: 5 + (i % 5),
}));

const U_FFFD = Buffer.from('\uFFFD', 'utf8');
const countReplacements = (bytes: Buffer) => {
  let n = 0;
  for (let i = bytes.indexOf(U_FFFD); i >= 0; i = bytes.indexOf(U_FFFD, i + 1)) n++;
  return n;
};

interface Line { key: string; task: string; code: string; output: string | null }
const parseLines = (bytes: Buffer): Line[] => bytes.toString('utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Line);

let dir: { path: string; remove(): Promise<void> };
let source: ServerHandle;
let target: ServerHandle;
/** GET /v1/governance/export from the source, as bytes, and how many chunk boundaries split a character. */
let httpBytes: Buffer;
let splitBoundaries = 0;
const readers: ReturnType<typeof spawn>[] = [];
let socketServer: Server | undefined;

async function httpExport(url: string): Promise<{ bytes: Buffer; splits: number }> {
  const res = await fetch(`${url}/v1/governance/export`, { headers: { accept: 'application/x-ndjson' } });
  expect(res.status).toBe(200);
  const chunks: Buffer[] = [];
  let splits = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    // A chunk starting with a continuation byte (10xxxxxx) continues the previous one's character.
    if (chunks.length > 0 && (chunk[0] & 0xc0) === 0x80) splits++;
    chunks.push(Buffer.from(chunk));
  }
  return { bytes: Buffer.concat(chunks), splits };
}

/** Runs the CLI as a child with its stdout on `fd` (a file, like `> backup.ndjson`). */
function exportToFd(args: string[], fd: number): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: childEnv(), stdio: ['ignore', fd, 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/** `cat PATH` as a child: reads a FIFO (or file) to its end; resolves with every byte read. */
function catBytes(path: string): Promise<Buffer> {
  const child = spawn('cat', [path], { stdio: ['ignore', 'pipe', 'pipe'] });
  readers.push(child);
  const chunks: Buffer[] = [];
  child.stdout!.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', () => resolve(Buffer.concat(chunks)));
  });
}

const mknod = (path: string, minor: number) => new Promise<void>((resolve, reject) => {
  const child = spawn('mknod', [path, 'c', '1', String(minor)], { stdio: 'ignore' });
  child.on('error', reject);
  child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`mknod exited ${code}`))));
});

/** Whether this process may create device nodes (root with CAP_MKNOD); the device test needs it. */
const canMknod = await (async () => {
  const probe = await tempDir('cli-export-mknod-');
  try {
    await mknod(join(probe.path, 'null'), 3);
    return true;
  } catch {
    return false;
  } finally {
    await probe.remove();
  }
})();

beforeAll(async () => {
  dir = await tempDir('cli-export-bytes-');
  const env = { SERVICE_MAX_BODY_SIZE: String(32 * 1024 * 1024) };
  [source, target] = await Promise.all([
    startServer({ dataPath: join(dir.path, 'source'), env }),
    startServer({ dataPath: join(dir.path, 'target'), env }),
  ]);
  const res = await fetch(`${source.url}/v1/import`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ records: importRecords }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  expect(await res.json()).toMatchObject({ imported: RECORDS });
  ({ bytes: httpBytes, splits: splitBoundaries } = await httpExport(source.url));
}, 120_000);

afterAll(async () => {
  for (const reader of readers) if (reader.exitCode === null) reader.kill();
  socketServer?.close();
  await Promise.all([source?.stop(), target?.stop()]);
  await dir?.remove();
});

describe('export --ndjson to stdout', () => {
  it('stdout redirected to a file is byte for byte the HTTP stream; imported into a fresh project, every task and code is unchanged', async () => {
    // The data does split characters between chunks (else this test could not fail).
    expect(splitBoundaries).toBeGreaterThan(0);
    expect(countReplacements(httpBytes)).toBe(0);
    const sent = parseLines(httpBytes);
    expect(sent).toHaveLength(RECORDS);

    const file = join(dir.path, 'backup.ndjson');
    const handle = await open(file, 'w');
    const res = await exportToFd(['export', '--ndjson', '--url', source.url], handle.fd);
    await handle.close();
    expect(res.code, res.stderr).toBe(0);
    const written = await readFile(file);
    expect(countReplacements(written)).toBe(0);
    expect(written.length).toBe(httpBytes.length);
    expect(written.equals(httpBytes)).toBe(true);

    const imported = await runCli(['import', file, '--url', target.url]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ imported: RECORDS, skipped: 0 });
    const back = parseLines((await httpExport(target.url)).bytes);
    const byKey = new Map(back.map((r) => [r.key, r]));
    expect(back).toHaveLength(RECORDS);
    for (const r of sent) {
      expect(byKey.get(r.key), r.key).toMatchObject({ task: r.task, code: r.code, output: r.output });
    }
  });

  it('waits for a full stdout to drain before writing the next chunk', async () => {
    // A stdout that takes one chunk at a time: write() answers false at once (highWaterMark 1)
    // and a chunk is only "written" once the exporter waits for 'drain'. A write arriving while
    // the previous chunk is still held means the exporter ignored backpressure.
    let held: (() => void) | null = null;
    let ignoredBackpressure = 0;
    const chunks: Buffer[] = [];
    const stdout = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _enc, callback) {
        chunks.push(Buffer.from(chunk));
        held = callback;
      },
    });
    const write = stdout.write.bind(stdout);
    stdout.write = ((chunk: Buffer) => {
      if (held) {
        ignoredBackpressure++;
        const release = held;
        held = null;
        release();
      }
      const accepted = write(chunk);
      // Release once the exporter is waiting for 'drain' (it subscribed right after write()).
      setImmediate(() => {
        if (held && stdout.listenerCount('drain') > 0) {
          const release = held;
          held = null;
          release();
        }
      });
      return accepted;
    }) as typeof stdout.write;
    const { io, stderr } = fakeIo();
    const code = await main(['node', 'service', 'export', '--ndjson', '--url', source.url], { ...io, stdout: Object.assign(stdout, { isTTY: false }) });
    expect(code, stderr.text).toBe(0);
    expect(chunks.length).toBeGreaterThan(1);
    expect(ignoredBackpressure).toBe(0);
    expect(Buffer.concat(chunks).equals(httpBytes)).toBe(true);
  });
});

describe('export --output onto what is not a regular file', () => {
  it('a FIFO is written to its reader and stays a FIFO', async () => {
    const fifo = join(dir.path, 'backup.fifo');
    await new Promise<void>((resolve, reject) => {
      const child = spawn('mkfifo', [fifo], { stdio: 'ignore' });
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`mkfifo exited ${code}`))));
    });
    const received = catBytes(fifo);
    const res = await runCli(['export', '--ndjson', '--output', fifo, '--url', source.url]);
    expect(res.code, res.stderr).toBe(0);
    expect((await lstat(fifo)).isFIFO()).toBe(true);
    expect((await received).equals(httpBytes)).toBe(true);
  });

  it('a symlink is written through to its target and stays a symlink (NDJSON and JSON export)', async () => {
    await mkdir(join(dir.path, 'real'));
    const real = join(dir.path, 'real', 'backup.ndjson');
    const link = join(dir.path, 'link.ndjson');
    await writeFile(real, 'an older backup\n');
    await symlink(real, link);
    const res = await runCli(['export', '--ndjson', '--output', link, '--url', source.url]);
    expect(res.code, res.stderr).toBe(0);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect((await readFile(real)).equals(httpBytes)).toBe(true);
    // The temp file of the atomic write sat beside the target and is gone.
    expect((await readdir(join(dir.path, 'real'))).sort()).toEqual(['backup.ndjson']);

    // A dangling link (relative) creates its target.
    const jsonLink = join(dir.path, 'json-link.json');
    await symlink('real/export.json', jsonLink);
    const json = await runCli(['export', '--output', jsonLink, '--url', source.url]);
    expect(json.code, json.stderr).toBe(0);
    expect((await lstat(jsonLink)).isSymbolicLink()).toBe(true);
    expect(JSON.parse(await readFile(join(dir.path, 'real', 'export.json'), 'utf8'))).toMatchObject({ count: RECORDS });
  });

  it.skipIf(!canMknod)('a device node is written in place; one that cannot be written is refused with exit 2', async () => {
    const nullDevice = join(dir.path, 'null');
    const fullDevice = join(dir.path, 'full');
    await mknod(nullDevice, 3); // like /dev/null
    await mknod(fullDevice, 7); // like /dev/full: every write fails with ENOSPC
    const res = await runCli(['export', '--ndjson', '--output', nullDevice, '--url', source.url]);
    expect(res.code, res.stderr).toBe(0);
    expect((await lstat(nullDevice)).isCharacterDevice()).toBe(true);

    const full = await runCli(['export', '--ndjson', '--output', fullDevice, '--url', source.url]);
    expect(full.code).toBe(2);
    expect(full.stderr).toContain(`cannot write "${fullDevice}"`);
    expect((await lstat(fullDevice)).isCharacterDevice()).toBe(true);
  });

  it('a directory or a socket is refused with exit 2 and left as it is', async () => {
    const folder = join(dir.path, 'a-folder');
    await mkdir(folder);
    const res = await runCli(['export', '--ndjson', '--output', folder, '--url', source.url]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('is a directory');
    expect((await lstat(folder)).isDirectory()).toBe(true);

    const socketPath = join(dir.path, 'a.sock');
    socketServer = createServer();
    socketServer.listen(socketPath);
    await once(socketServer, 'listening');
    for (const args of [['export', '--ndjson'], ['export']]) {
      const refused = await runCli([...args, '--output', socketPath, '--url', source.url]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('not a file, a FIFO or a device');
      expect((await lstat(socketPath)).isSocket()).toBe(true);
    }
  });
});
