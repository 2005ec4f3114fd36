import { access, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Downloads model files from a Hugging Face-style hub (`<endpoint>/<repo>/resolve/main/<file>`)
 * into `<cacheDir>/<repo>/`. A file is written to a temporary name and renamed only once it is
 * complete and flushed, so an interrupted download never leaves a file that looks whole.
 */
export interface HubDownloadOptions {
  /** Hub base URL (HF_ENDPOINT). */
  endpoint: string;
  /** Repository id, e.g. minishlab/potion-base-8M. */
  repo: string;
  cacheDir: string;
  /** Progress lines go here when it is a terminal (stderr). */
  progress?: NodeJS.WriteStream | null;
}

/** The files of a model2vec repository, config first (it tells the layout). */
export const MODEL2VEC_FILES = ['config.json', 'tokenizer.json', 'model.safetensors'] as const;

/** The local folder of a hub repository inside the cache. */
export function hubFolder(cacheDir: string, repo: string): string {
  return join(cacheDir, ...repo.split('/'));
}

/** Returns the local path of `file`, downloading it first unless the cache already holds it. */
export async function hubFile(opts: HubDownloadOptions, file: string): Promise<string> {
  const target = join(hubFolder(opts.cacheDir, opts.repo), file);
  if (await exists(target)) return target;
  const url = `${opts.endpoint.replace(/\/+$/, '')}/${opts.repo}/resolve/main/${file}`;
  let response: Response;
  try {
    response = await fetch(url, { redirect: 'follow' });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    throw new Error(`cannot download ${url} (${err instanceof Error ? err.message : String(err)}${cause})`, { cause: err });
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    throw new Error(`cannot download ${url}: HTTP ${response.status}`);
  }
  const total = Number(response.headers.get('content-length')) || null;
  await mkdir(dirname(target), { recursive: true });
  const partial = `${target}.${process.pid}.part`;
  // The partial file is opened here, before the pipeline: a stream that opens its file lazily
  // could still create it after a failed pipeline has returned and the clean-up below has run.
  const handle = await open(partial, 'w');
  try {
    let received = 0;
    const report = progressReporter(opts.progress ?? null, `${opts.repo}/${file}`, total);
    const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
    body.on('data', (chunk: Buffer) => report((received += chunk.length)));
    await pipeline(body, handle.createWriteStream());
    report(received, true);
    if (total !== null && received !== total) throw new Error(`cannot download ${url}: got ${received} of ${total} bytes`);
    await flush(partial);
    await rename(partial, target);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(partial, { force: true });
    throw err;
  }
  return target;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
}

/** The bytes must be on disk before the rename makes the file visible under its real name. */
async function flush(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A `\r`-rewritten progress line on a terminal, every 5% (or every MB of unknown length); nothing elsewhere. */
function progressReporter(stream: NodeJS.WriteStream | null, name: string, total: number | null) {
  if (!stream?.isTTY) return () => undefined;
  let shown = -1;
  return (received: number, done = false): void => {
    const step = total ? Math.floor((received / total) * 20) : Math.floor(received / 1e6);
    if (!done && step === shown) return;
    shown = step;
    const size = `${(received / 1e6).toFixed(1)}${total ? ` of ${(total / 1e6).toFixed(1)}` : ''} MB`;
    stream.write(`\rdownloading ${name}: ${size}${done ? '\n' : ''}`);
  };
}
