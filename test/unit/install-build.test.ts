/**
 * A rebuild swaps into dist/ without breaking a CLI that runs from it
 * (scripts/install-build.mjs, used by scripts/build.mjs): the entry is never missing while
 * the files move, a process started from the old build still loads its chunks afterwards,
 * and superseded files go once they have been superseded for an hour.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GRACE_MS, installBuild } from '../../scripts/install-build.mjs';
import { tempDir } from '../support/env.js';

let dir: { path: string; remove(): Promise<void> };
beforeEach(async () => {
  dir = await tempDir('svc-install-build-');
});
afterEach(async () => {
  await dir.remove();
});

/** Writes a build: an entry that imports `chunk` when asked (stdin), and the chunk. */
async function writeBuild(root: string, chunk: string, version: string): Promise<void> {
  const files: Record<string, string> = {
    'cli/entry.js': `export const version = '${version}'; export const later = () => import('./${chunk}');\n`,
    [`cli/${chunk}`]: `export const from = '${version}';\n`,
    'src/client/index.js': `export const v = '${version}';\n`,
    'build-info.json': JSON.stringify({ build_time: version }),
  };
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
}

describe('installBuild', () => {
  it('moves a build into place; superseded files stay for an hour, then go', async () => {
    const dist = join(dir.path, 'dist');
    await writeBuild(join(dir.path, 'b1'), 'chunk-OLD.js', 'v1');
    installBuild(join(dir.path, 'b1'), dist, 0);
    await writeBuild(join(dir.path, 'b2'), 'chunk-NEW.js', 'v2');
    installBuild(join(dir.path, 'b2'), dist, 1000);

    expect(readFileSync(join(dist, 'cli/entry.js'), 'utf8')).toContain("'v2'");
    expect(existsSync(join(dist, 'cli/chunk-NEW.js'))).toBe(true);
    expect(existsSync(join(dist, 'cli/chunk-OLD.js'))).toBe(true);
    expect(JSON.parse(readFileSync(join(dist, '.superseded.json'), 'utf8'))).toEqual({ 'cli/chunk-OLD.js': 1000 });

    // A build just before the hour is up keeps it; the first one after removes it.
    await writeBuild(join(dir.path, 'b3'), 'chunk-NEW.js', 'v3');
    installBuild(join(dir.path, 'b3'), dist, 1000 + GRACE_MS - 1);
    expect(existsSync(join(dist, 'cli/chunk-OLD.js'))).toBe(true);
    await writeBuild(join(dir.path, 'b4'), 'chunk-NEW.js', 'v4');
    installBuild(join(dir.path, 'b4'), dist, 1000 + GRACE_MS);
    expect(existsSync(join(dist, 'cli/chunk-OLD.js'))).toBe(false);
    expect(JSON.parse(readFileSync(join(dist, '.superseded.json'), 'utf8'))).toEqual({});
  });

  it('a process started from the old build loads its lazy chunk after the swap', async () => {
    const dist = join(dir.path, 'dist');
    await writeBuild(join(dir.path, 'b1'), 'chunk-OLD.js', 'v1');
    installBuild(join(dir.path, 'b1'), dist);
    const running = spawn(process.execPath, ['--input-type=module', '-e', [
      `const m = await import(${JSON.stringify(join(dist, 'cli/entry.js'))});`,
      "process.stdout.write('ready\\n');",
      "process.stdin.once('data', async () => { const c = await m.later(); process.stdout.write(m.version + ' ' + c.from + '\\n'); });",
    ].join('\n')], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    running.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    await new Promise<void>((resolve) => running.stdout.on('data', () => out.includes('ready') && resolve()));

    await writeBuild(join(dir.path, 'b2'), 'chunk-NEW.js', 'v2');
    installBuild(join(dir.path, 'b2'), dist);
    running.stdin.end('go\n');
    const code = await new Promise((resolve) => running.on('close', resolve));
    expect(code).toBe(0);
    expect(out).toContain('v1 v1');
  });

  it('the entry exists at every moment of many swaps (watched from another process)', async () => {
    const dist = join(dir.path, 'dist');
    await writeBuild(join(dir.path, 'b0'), 'chunk-0.js', 'v0');
    installBuild(join(dir.path, 'b0'), dist);
    const entry = join(dist, 'cli/entry.js');
    // The watcher checks as fast as it can until told to stop, then reports what it saw.
    const watcher = spawn(process.execPath, ['-e', [
      "const { existsSync } = require('node:fs');",
      'let checks = 0, missing = 0, stop = false;',
      "process.stdin.once('data', () => { stop = true; });",
      "process.stdout.write('ready\\n');",
      `const loop = () => { for (let i = 0; i < 500; i++) { checks++; if (!existsSync(${JSON.stringify(entry)})) missing++; } if (stop) process.stdout.write(JSON.stringify({ checks, missing }) + '\\n'); else setImmediate(loop); };`,
      'loop();',
    ].join('\n')], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    watcher.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    await new Promise<void>((resolve) => watcher.stdout.on('data', () => out.includes('ready') && resolve()));
    for (let i = 1; i <= 100; i++) {
      await writeBuild(join(dir.path, `b${i}`), `chunk-${i}.js`, `v${i}`);
      installBuild(join(dir.path, `b${i}`), dist);
    }
    watcher.stdin.end('stop\n');
    await new Promise((resolve) => watcher.on('close', resolve));
    const seen = JSON.parse(out.split('\n')[1]) as { checks: number; missing: number };
    expect(seen.checks).toBeGreaterThan(0);
    expect(seen.missing).toBe(0);
  });
});
