import { describe, expect, it } from 'vitest';
import { inBatches } from '../../src/core/batches.js';

async function* numbers(n: number): AsyncGenerator<number> {
  for (let i = 0; i < n; i++) yield i;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('inBatches', () => {
  it('cuts a stream into full batches and one shorter last batch', async () => {
    expect(await collect(inBatches(numbers(7), 3))).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
  });

  it('yields no empty batch: nothing for an empty stream, no tail after an exact fit', async () => {
    expect(await collect(inBatches(numbers(0), 3))).toEqual([]);
    expect(await collect(inBatches(numbers(6), 3))).toEqual([[0, 1, 2], [3, 4, 5]]);
  });
});
