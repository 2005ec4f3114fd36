import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';
import { IMPORT_OF_EXPORT_V1 } from '../fixtures/reference/expected.js';

/** `service import` of the reference system's export files, then recall (issue 10). */

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/reference/${name}`, import.meta.url));
const REF_KEY = 'patterns/3f2a9c1b_1731000000000_aB3-xY';
const FRESH_KEY = 'patterns/0m2f3k9x000a1b2c3d';
const QUERY = 'parse a CSV file of customer orders into JSON records';

let dir: { path: string; remove(): Promise<void> };
let server: ServerHandle;
const cli = (args: string[]) => runCli([...args, '--url', server.url]);

interface Recalled { matches: { pattern_key: string; similarity: number; reuse_tier: string; score: number }[] }

beforeAll(async () => {
  dir = await tempDir('cli-reference-');
  server = await startServer({ dataPath: join(dir.path, 'data') });
});
afterAll(async () => {
  await server?.stop();
  await dir.remove();
});

describe('service import of the reference export', () => {
  it('imports versioned and flat records with both key shapes, reporting the skipped ones', async () => {
    const res = await cli(['import', fixture('export-v1.json')]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual(IMPORT_OF_EXPORT_V1);

    const recalled = await cli(['recall', QUERY, '--readonly']);
    expect(recalled.code).toBe(0);
    const body = JSON.parse(recalled.stdout) as Recalled;
    expect(body.matches[0]).toMatchObject({ pattern_key: REF_KEY, reuse_tier: 'duplicate' });
    const slack = JSON.parse((await cli(['recall', 'send a slack notification when a deployment fails', '--readonly', '--limit', '1'])).stdout) as Recalled;
    expect(slack.matches[0].pattern_key).toBe('patterns/9c1d2e3f_1731500000000_Zz-9_q');
  });

  it('imports an NDJSON file (governance export lines, a versioned record mixed in)', async () => {
    const res = await cli(['import', fixture('export-governance.ndjson')]);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ imported: 2, skipped: 0, total: 2 });
    const found = JSON.parse((await cli(['recall', 'rotate the database credentials every month', '--readonly', '--limit', '1'])).stdout) as Recalled;
    expect(found.matches[0]).toMatchObject({ pattern_key: 'patterns/7a7a7a7a_1732000000000_Ndjson', reuse_tier: 'duplicate' });
  });

  it('recall --recency-weight ranks the fresher pattern first; similarity and tier stay raw', async () => {
    // REF_KEY was last updated in 2024 (timestamp 1731000000); FRESH_KEY carries a future
    // timestamp (2100), which counts as age 0 whenever this runs.
    const plain = JSON.parse((await cli(['recall', QUERY, '--readonly', '--no-eval-weighted'])).stdout) as Recalled;
    expect(plain.matches.map((m) => m.pattern_key).slice(0, 2)).toEqual([REF_KEY, FRESH_KEY]);
    const res = await cli(['recall', QUERY, '--readonly', '--no-eval-weighted', '--recency-weight', '1', '--recency-half-life', '30']);
    expect(res.code).toBe(0);
    const weighted = JSON.parse(res.stdout) as Recalled;
    expect(weighted.matches[0].pattern_key).toBe(FRESH_KEY);
    const old = weighted.matches.find((m) => m.pattern_key === REF_KEY);
    expect(old).toMatchObject({ similarity: plain.matches[0].similarity, reuse_tier: 'duplicate' });
    expect(old!.score).toBeLessThan(plain.matches[0].score / 1000);

    const bad = await cli(['recall', QUERY, '--recency-weight', '2']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--recency-weight/);
  });

  it('a file that is neither JSON nor NDJSON, or has an invalid record, imports nothing (exit 2)', async () => {
    const broken = join(dir.path, 'broken.ndjson');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(broken, '{"version":1,"key":"patterns/x_1_y","data":{"task":"t","design":{"code":"c"},"success_score":5}}\n{not json\n');
    const res = await cli(['import', broken]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/neither JSON nor NDJSON: line 2/);
    const invalid = join(dir.path, 'invalid.json');
    await writeFile(invalid, JSON.stringify([{ version: 1, key: 'patterns/x_1_y', data: { design: { code: 'c' }, success_score: 5 } }]));
    const refused = await cli(['import', invalid]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/records\[0\]\.data\.task/);
  });
});
