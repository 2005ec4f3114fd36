import type { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ApiError, ServiceClient, type HttpMethod, type RequestOptions, type RequestTransport } from '../../src/client/index.js';
import { sendSplittingTooLarge } from '../../src/client/import-chunks.js';

/**
 * The one 413 halve-and-retry of the client (src/client/import-chunks.ts), and both imports
 * that use it: ServiceClient.importAll (POST /v1/import) and client.jobs.submitImport (import
 * jobs). A request of more than `limit` records is refused as the server refuses a body over
 * its byte limit.
 */
const tooLarge = () => new ApiError(413, 'body exceeds 1024 bytes', { detail: 'body exceeds 1024 bytes' }, null);

describe('sendSplittingTooLarge', () => {
  it('sends chunks of chunkSize in order, with the offset of each chunk', async () => {
    const sent: [number[], number][] = [];
    await sendSplittingTooLarge([0, 1, 2, 3, 4, 5, 6], 3, async (chunk, offset) => void sent.push([chunk, offset]));
    expect(sent).toEqual([[[0, 1, 2], 0], [[3, 4, 5], 3], [[6], 6]]);
  });

  it('halves a refused chunk until the halves pass, keeping order and offsets', async () => {
    const sent: [number[], number][] = [];
    const refused: number[] = [];
    const records = Array.from({ length: 10 }, (_, i) => i);
    await sendSplittingTooLarge(records, 10, async (chunk, offset) => {
      if (chunk.length > 3) {
        refused.push(chunk.length);
        throw tooLarge();
      }
      sent.push([chunk, offset]);
    });
    expect(refused).toEqual([10, 5, 5]);
    expect(sent).toEqual([[[0, 1, 2], 0], [[3, 4], 3], [[5, 6, 7], 5], [[8, 9], 8]]);
    for (const [chunk, offset] of sent) expect(chunk[0]).toBe(offset);
  });

  it('throws the 413 of a single record, and every other error at once', async () => {
    await expect(sendSplittingTooLarge([1, 2], 2, async () => {
      throw tooLarge();
    })).rejects.toMatchObject({ status: 413 });

    let calls = 0;
    const unavailable = new ApiError(503, 'maintenance', null, null);
    await expect(sendSplittingTooLarge([1, 2, 3, 4], 4, async () => {
      calls++;
      throw unavailable;
    })).rejects.toBe(unavailable);
    expect(calls).toBe(1);
  });

  it('keeps the chunk size within 1…10,000', async () => {
    const sizes: number[] = [];
    const records = Array.from({ length: 10_001 }, (_, i) => i);
    await sendSplittingTooLarge(records, 50_000, async (chunk) => void sizes.push(chunk.length));
    expect(sizes).toEqual([10_000, 1]);
    sizes.length = 0;
    await sendSplittingTooLarge([1, 2], 0, async (chunk) => void sizes.push(chunk.length));
    expect(sizes).toEqual([1, 1]);
    sizes.length = 0;
    await sendSplittingTooLarge(records.slice(0, 3), undefined, async (chunk) => void sizes.push(chunk.length));
    expect(sizes).toEqual([3]);
  });
});

/** Answers like the server, refusing (413) any request carrying more than `limit` records. */
class ImportTransport implements RequestTransport {
  readonly baseUrl = 'http://in-process';
  readonly requests: { path: string; records: unknown[]; headers?: Record<string, string> }[] = [];
  constructor(private readonly limit: number) {}

  async request<S extends z.ZodType>(_method: HttpMethod, path: string, options: RequestOptions<S>): Promise<z.infer<S>> {
    const { records } = options.body as { records: unknown[] };
    if (records.length > this.limit) throw tooLarge();
    this.requests.push({ path, records, headers: options.headers });
    const schema = typeof options.schema === 'function' ? await options.schema() : options.schema;
    const answer = options.headers?.prefer === 'respond-async'
      ? { job_id: `job-${this.requests.length}`, status: 'pending' }
      : { imported: records.length - 1, skipped: 1, total: records.length, skipped_records: [{ index: 0, key: null, reason: 'exists' }] };
    return schema.parse(answer);
  }

  async close(): Promise<void> {}
}

const records = Array.from({ length: 9 }, (_, i) => ({ task: `task ${i}`, code: 'x', eval_score: 5 }));
const tasksOf = (sent: { records: unknown[] }[]) => sent.flatMap((r) => (r.records as { task: string }[]).map((x) => x.task));

describe('both imports split on 413 through the one helper', () => {
  it('ServiceClient.importAll sums the totals and maps skipped records back to their index', async () => {
    const transport = new ImportTransport(2);
    const client = new ServiceClient({ url: 'http://unused', transport });
    const progress: number[] = [];
    const totals = await client.importAll(records, { chunkSize: 5, onProgress: (sent) => progress.push(sent) });
    expect(transport.requests.map((r) => r.records.length)).toEqual([2, 1, 2, 2, 2]);
    expect(tasksOf(transport.requests)).toEqual(records.map((r) => r.task));
    expect(totals).toMatchObject({ imported: 4, skipped: 5, total: 9 });
    expect(totals.skipped_records?.map((s) => s.index)).toEqual([0, 2, 3, 5, 7]);
    expect(progress).toEqual([2, 3, 5, 7, 9]);
  });

  it('client.jobs.submitImport submits one job per accepted chunk', async () => {
    const transport = new ImportTransport(3);
    const client = new ServiceClient({ url: 'http://unused', transport });
    const accepted = await client.jobs.submitImport(records, { overwrite: true });
    expect(transport.requests.map((r) => [r.path, r.headers?.prefer, r.records.length])).toEqual([
      ['/v1/import', 'respond-async', 3], ['/v1/import', 'respond-async', 2], ['/v1/import', 'respond-async', 2], ['/v1/import', 'respond-async', 2],
    ]);
    expect(tasksOf(transport.requests)).toEqual(records.map((r) => r.task));
    expect(accepted.map((a) => a.job_id)).toEqual(['job-1', 'job-2', 'job-3', 'job-4']);
  });
});
