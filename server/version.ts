import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { VersionResponse } from '../src/contracts/health.js';

/** GET /v1/version's body (the contract is its one definition). */
export type VersionInfo = VersionResponse;

/**
 * package.json's version and the commit/time `npm run build` wrote to dist/build-info.json.
 * This file runs from server/ (tests, tsx) or dist/server/ (built), so both roots are tried.
 */
export async function readVersionInfo(): Promise<VersionInfo> {
  const here = dirname(fileURLToPath(import.meta.url));
  const roots = [join(here, '..'), join(here, '..', '..')];
  const pkg = await firstJson<{ version?: string; name?: string }>(roots.map((r) => join(r, 'package.json')), (j) => typeof j.version === 'string');
  const build = await firstJson<{ git_commit?: string; build_time?: string }>(
    roots.flatMap((r) => [join(r, 'build-info.json'), join(r, 'dist', 'build-info.json')]),
    (j) => typeof j.git_commit === 'string',
  );
  return {
    app_version: pkg?.version ?? 'unknown',
    api_version: 'v1',
    git_commit: build?.git_commit ?? 'unknown',
    build_time: build?.build_time ?? 'unknown',
  };
}

async function firstJson<T>(paths: string[], accept: (json: T) => boolean): Promise<T | null> {
  for (const path of paths) {
    try {
      const json = JSON.parse(await readFile(path, 'utf8')) as T;
      if (accept(json)) return json;
    } catch {
      // Absent or unreadable: try the next candidate.
    }
  }
  return null;
}
