import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';

/**
 * The JSON store's scan thread runs a module of its own (src/adapters/storage/json/engine/
 * scan-worker.ts), found beside the module that starts it. The tests of the sources prove it
 * there; this proves it in the build the service runs: the library's dist/src, and the command
 * line's bundle in dist/cli (scripts/bundle-cli.mjs), where the starting module is a chunk.
 */
const DIST = join(BIN, '..', '..', 'dist');
const ENGINE = join(DIST, 'src', 'adapters', 'storage', 'json', 'engine');

type ThreadModule = typeof import('../../src/adapters/storage/json/engine/scan-thread.js');
type IndexModule = typeof import('../../src/adapters/storage/json/engine/vector-index.js');
type KernelModule = typeof import('../../src/adapters/storage/json/engine/int8-kernel.js');
type SlicesModule = typeof import('../../src/core/slices.js');

const load = async <T>(file: string): Promise<T> => (await import(pathToFileURL(file).href)) as T;
const { ScanThread, scanWorkerScript } = await load<ThreadModule>(join(ENGINE, 'scan-thread.js'));
const { VectorIndex } = await load<IndexModule>(join(ENGINE, 'vector-index.js'));
const { sharedInt8Modules } = await load<KernelModule>(join(ENGINE, 'int8-kernel.js'));
const { WorkBudget } = await load<SlicesModule>(join(DIST, 'src', 'core', 'slices.js'));

const DIM = 64;
/** Past the size where the index scans its int8 copy (the scans a thread may take). */
const ROWS = 3_000;

function unitVector(seed: number): Float32Array {
  const v = Float32Array.from({ length: DIM }, (_, i) => (Math.sin(seed * 12.9898 + i * 78.233) * 43758.5453) % 1);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** How many of `queries` the thread started from `script` answered itself, over a searched index. */
async function answeredBy(script: ReturnType<typeof scanWorkerScript>, queries: number): Promise<number> {
  const modules = sharedInt8Modules();
  expect(modules).not.toBeNull();
  let answers = 0;
  // Takes every search, even a lone one, and counts the answers it gave (null: the caller searched itself).
  const thread = new (class extends ScanThread {
    override wanted(): boolean {
      return true;
    }
    override async scan(...args: Parameters<InstanceType<typeof ScanThread>['scan']>) {
      const result = await super.scan(...args);
      if (result) answers++;
      return result;
    }
  })(modules!, undefined, undefined, script);
  try {
    const index = new VectorIndex<{ n: number }>(false, thread);
    for (let n = 0; n < ROWS; n++) index.set(`p${String(n).padStart(6, '0')}`, { n }, unitVector(n));
    for (let i = 0; i < queries; i++) {
      const q = unitVector(100_000 + i);
      const hits = await index.searchInSlices(q, 10, undefined, new WorkBudget(async () => undefined, 1_000_000));
      expect(hits).toEqual(index.search(q, 10));
    }
  } finally {
    await thread.stop();
  }
  return answers;
}

// One core: there is no thread by design (docs/behavior.md "Recall" 4).
describe.runIf(availableParallelism() > 1)('the built scan worker', () => {
  it('starts from the library build (dist/src), beside the module that starts it', async () => {
    const script = scanWorkerScript(pathToFileURL(join(ENGINE, 'scan-thread.js')).href);
    expect(script).toEqual({ url: pathToFileURL(join(ENGINE, 'scan-worker.js')) });
    expect(await answeredBy(script, 3)).toBe(3);
  });

  it('starts from the command line bundle (dist/cli), beside the chunk that starts it', async () => {
    const chunks = JSON.parse(readFileSync(join(DIST, 'cli', 'meta.json'), 'utf8')) as Record<string, { sources: string[] }>;
    const starter = Object.keys(chunks).find((c) => chunks[c].sources.includes('dist/src/adapters/storage/json/engine/scan-thread.js'));
    expect(starter).toBeDefined();
    const script = scanWorkerScript(pathToFileURL(join(DIST, 'cli', starter!)).href);
    expect(script.url.href).toBe(pathToFileURL(join(DIST, 'cli', 'scan-worker.js')).href);
    expect(existsSync(script.url)).toBe(true);
    expect(await answeredBy(script, 3)).toBe(3);
  });
});
