import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AppendLog } from '../../src/adapters/storage/json/durable/append-log.js';

/**
 * Group commit of the JSON journal: every POST recall appends its reuse, counter and ROI lines
 * and waits for them to be durable before it answers. Concurrent writers must share the
 * write + fdatasync (one per batch, not one per line) while none hears "done" before its own
 * line is on disk.
 */
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'append-log-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

/** Counts fdatasync calls of every FileHandle (the class is not exported: take it from an open one). */
async function countDatasyncs(): Promise<{ count: () => number }> {
  const probe = await open(join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> };
  await probe.close();
  const spy = vi.spyOn(proto, 'datasync');
  return { count: () => spy.mock.calls.length };
}

describe('JSON journal append log (group commit)', () => {
  it('16 concurrent appends share two fdatasyncs, and each resolves only with its line on disk', async () => {
    const file = join(dir, 'journal.jsonl');
    const log = await AppendLog.open(file);
    const syncs = await countDatasyncs();
    const lines = Array.from({ length: 16 }, (_, i) => JSON.stringify({ op: 'recall', n: i }));
    const onDiskAtResolve: boolean[] = [];
    await Promise.all(lines.map(async (line) => {
      await log.append(line);
      onDiskAtResolve.push((await readFile(file, 'utf8')).split('\n').includes(line));
    }));
    // The first line goes out alone (its drain starts at once); the 15 queued behind it share the next write.
    expect(syncs.count()).toBe(2);
    expect(onDiskAtResolve).toEqual(lines.map(() => true));
    expect((await readFile(file, 'utf8')).trimEnd().split('\n')).toEqual(lines);
    expect(log.bytes).toBe(Buffer.byteLength(lines.map((l) => `${l}\n`).join('')));
    await log.close();
  });

  it('appends made while a batch is being written wait for the next batch, not for the one in flight', async () => {
    const file = join(dir, 'journal.jsonl');
    const log = await AppendLog.open(file);
    const syncs = await countDatasyncs();
    const first = log.append('{"n":0}');
    // Queued while the first batch's write is in flight: must not resolve with the first batch.
    const later = [log.append('{"n":1}'), log.append('{"n":2}')];
    let laterDone = false;
    void Promise.all(later).then(() => (laterDone = true));
    await first;
    // The second batch still needs its own write and fdatasync (I/O, never within this microtask turn).
    expect(laterDone).toBe(false);
    await Promise.all(later);
    expect(laterDone).toBe(true);
    expect((await readFile(file, 'utf8')).trimEnd().split('\n')).toEqual(['{"n":0}', '{"n":1}', '{"n":2}']);
    expect(syncs.count()).toBe(2);
    await log.close();
  });
});
