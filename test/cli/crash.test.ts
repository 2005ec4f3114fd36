import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceClient, type ExportResponse } from '../../src/client/index.js';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * Durability of the embedded store: a server killed with SIGKILL while learns are in flight
 * loses nothing it acknowledged. And one data path belongs to one server at a time.
 */

const WORKERS = 4;
const KILL_AFTER_ACKS = 40;

let dir: { path: string; remove(): Promise<void> };
const started: ServerHandle[] = [];

beforeAll(async () => {
  dir = await tempDir('cli-crash-');
});
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop('SIGKILL')));
  await dir.remove();
});

async function exportAll(url: string): Promise<ExportResponse> {
  const client = new ServiceClient({ url });
  try {
    return await client.exportAll();
  } finally {
    await client.close();
  }
}

/**
 * WORKERS clients `send` in a loop and `check` each answer; once KILL_AFTER_ACKS have been
 * answered the server is killed with SIGKILL while the other workers' requests are in flight.
 * Resolves with the number of answers once every worker has seen the server go (a request
 * that failed was never acknowledged).
 */
async function loadUntilKilled<T>(server: ServerHandle, send: (client: ServiceClient) => Promise<T>, check: (answer: T) => void): Promise<number> {
  let acks = 0;
  let killed = false;
  const worker = async () => {
    const client = new ServiceClient({ url: server.url, timeoutMs: 20_000 });
    try {
      while (!killed) {
        let answer: T;
        try {
          answer = await send(client);
        } catch {
          return; // the server is gone: this request was never acknowledged
        }
        check(answer);
        acks++;
        if (acks >= KILL_AFTER_ACKS && !killed) {
          killed = true;
          server.child.kill('SIGKILL'); // the other workers' requests are in flight right now
        }
      }
    } finally {
      await client.close();
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  return acks;
}

describe('crash safety of the JSON store', () => {
  it('a second server on the same data path is refused with a clear message', async () => {
    const dataPath = join(dir.path, 'shared');
    const first = await startServer({ dataPath });
    started.push(first);

    const second = await runCli(['serve', '--port', '0'], { env: { SERVICE_DATA_PATH: dataPath } });
    expect(second.code).not.toBe(0);
    expect(second.stdout).not.toContain('listening on');
    expect(second.stderr).toMatch(/^error: .*in use.*/m);
    expect(second.stderr).toContain(String(first.child.pid));

    // The first server is unaffected.
    const health = await runCli(['health', '--url', first.url]);
    expect(health.code).toBe(0);
    await first.stop();
  });

  it('every acknowledged learn survives SIGKILL mid-loop', async () => {
    const dataPath = join(dir.path, 'crash');
    const server = await startServer({ dataPath });
    started.push(server);

    const acknowledged = new Map<string, string>(); // pattern key → task
    let next = 0;
    await loadUntilKilled(server, async (client) => {
      const task = `crash probe ${next++}`;
      return { task, res: await client.learn({ task, code: `solve(${next})`, eval_score: 6 }) };
    }, ({ task, res }) => {
      expect(res.stored).toBe(true);
      acknowledged.set(res.pattern_key as string, task);
    });
    expect(await server.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(acknowledged.size).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);

    // Restart on the same path: the dead process's lock is stale and must not block it.
    const restarted = await startServer({ dataPath });
    started.push(restarted);
    const { records, count } = await exportAll(restarted.url);
    const stored = new Map(records.map((r) => [r.key, r.task]));
    const missing = [...acknowledged].filter(([key, task]) => stored.get(key) !== task);
    expect(missing).toEqual([]);
    expect(count).toBe(records.length);
    // Nothing beyond what was attempted (acknowledged, or in flight at the kill) appeared.
    expect(count).toBeLessThanOrEqual(acknowledged.size + WORKERS);

    // The restarted store is fully usable: it accepts writes and finds the recovered patterns.
    const client = new ServiceClient({ url: restarted.url });
    try {
      expect((await client.learn({ task: 'after the crash, a new run', code: 'ok()', eval_score: 7 })).stored).toBe(true);
      const probe = [...acknowledged.values()][0];
      const { matches } = await client.recall({ task: probe, limit: 1, readonly: true });
      expect(matches[0].pattern.task).toBe(probe);
    } finally {
      await client.close();
    }
    expect(await restarted.stop()).toEqual({ code: 0, signal: null });
  });

  it('every acknowledged POST recall keeps its reuse count and ROI event after SIGKILL (group commit)', async () => {
    const dataPath = join(dir.path, 'recall-crash');
    const server = await startServer({ dataPath });
    started.push(server);
    const task = 'parse the nightly sales csv and total each region';
    const seed = new ServiceClient({ url: server.url });
    const { pattern_key: key } = await seed.learn({ task, code: 'totals(rows)', eval_score: 8 });
    await seed.close();

    // Each recall of the same task reuses the pattern (a duplicate match): one reuse, one ROI event.
    const acknowledged = await loadUntilKilled(server, (client) => client.recall({ task, limit: 1 }), ({ matches }) => {
      expect(matches[0].pattern_key).toBe(key);
    });
    expect(await server.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(acknowledged).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);

    const restarted = await startServer({ dataPath });
    started.push(restarted);
    const { records } = await exportAll(restarted.url);
    const reuses = records.find((r) => r.key === key)?.reuse_count ?? -1;
    // Every acknowledged recall is on disk; at most the ones in flight at the kill come on top.
    expect(reuses).toBeGreaterThanOrEqual(acknowledged);
    expect(reuses).toBeLessThanOrEqual(acknowledged + WORKERS);
    const res = await fetch(`${restarted.url}/v1/analytics/events?limit=1000`);
    const { events } = (await res.json()) as { events: { kind: string }[] };
    const recalls = events.filter((e) => e.kind === 'recall').length;
    expect(recalls).toBeGreaterThanOrEqual(acknowledged);
    expect(recalls).toBeLessThanOrEqual(acknowledged + WORKERS);
    expect(await restarted.stop()).toEqual({ code: 0, signal: null });
  });
});
