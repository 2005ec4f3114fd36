/**
 * Helpers for the JSON-storage tests: a child process running the real adapter (to prove the
 * lock across processes and durability under SIGKILL), and a full dump of what a storage
 * holds (to compare a store before and after reopen, crash or compaction).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { Scope } from '../../src/core/types.js';
import type { Storage } from '../../src/ports/storage.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Transpiles the adapter and everything it imports (relative imports, followed transitively,
 * and the workers it starts) into `outDir`, so a plain `node` child can run the same code the
 * tests import.
 */
export async function transpileAdapter(outDir: string): Promise<string> {
  const entry = path.join(ROOT, 'src/adapters/storage/json/index.ts');
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = await readFile(file, 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
      fileName: file,
    });
    const out = path.join(outDir, path.relative(ROOT, file)).replace(/\.ts$/, '.js');
    await mkdir(path.dirname(out), { recursive: true });
    await writeFile(out, outputText);
    // Imports, and modules started by URL (the scan thread's worker: new URL('./x.js', import.meta.url)).
    for (const m of source.matchAll(/(?:from\s+|new URL\()'(\.{1,2}\/[^']+)\.js'/g)) {
      queue.push(path.resolve(path.dirname(file), `${m[1]}.ts`));
    }
  }
  await writeFile(path.join(outDir, 'package.json'), '{"type":"module"}\n');
  return path.join(outDir, 'src/adapters/storage/json/index.js');
}

export interface Child {
  proc: ChildProcess;
  /** Every stdout line so far. */
  lines: string[];
  /** Resolves with the first stdout line matching `re`. */
  waitFor(re: RegExp): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Runs an ES module script (text) in a child `node`; its stdout is split into lines. */
export async function runChild(dir: string, name: string, script: string): Promise<Child> {
  const file = path.join(dir, name);
  await writeFile(file, script);
  const proc = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  let partial = '';
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  proc.stdout!.on('data', (d: Buffer) => {
    partial += d.toString();
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.re.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  return {
    proc,
    lines,
    exited,
    waitFor(re) {
      const hit = lines.find((l) => re.test(l));
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        waiters.push({ re, resolve });
        void exited.then(({ code, signal, stderr: err }) =>
          reject(new Error(`child exited (${code ?? signal}) before printing ${re}: ${err}`)),
        );
      });
    },
  };
}

/** Everything observable through the port for the given scopes, in a comparable shape. */
export async function dumpStorage(storage: Storage, scopes: Scope[], queries: Float32Array[]) {
  const out: Record<string, unknown> = {
    scopes: (await storage.patterns.listScopes()).map((s) => `${s.tenant_id}/${s.project_id}`).sort(),
    audit: await storage.audit.list({ limit: 100_000 }),
    meta: await storage.meta.getEmbeddingInfo(),
  };
  for (const scope of scopes) {
    const patterns = [];
    for await (const p of storage.patterns.iterate(scope)) patterns.push(p);
    const ids = patterns.map((p) => p.id);
    const skills: Record<string, string[]> = {};
    for (const id of ids) skills[id] = await storage.skills.get(scope, id);
    out[`${scope.tenant_id}/${scope.project_id}`] = {
      count: await storage.patterns.count(scope),
      patterns,
      searches: await Promise.all(
        queries.map(async (q) =>
          (await storage.patterns.search(scope, q, 10)).map((h) => [h.pattern.id, Number(h.similarity.toFixed(5))]),
        ),
      ),
      evals: Object.fromEntries(await storage.evals.recent(scope, ids, 100)),
      skills,
      feedback: (await storage.feedback.list(scope)).sort((a, b) => a.id.localeCompare(b.id)),
      metrics: await storage.metrics.get(scope),
      analytics: await storage.analytics.list(scope, { limit: 20_000 }),
    };
  }
  return out;
}
