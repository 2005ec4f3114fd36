import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSafetensors, SafetensorsError } from '../../src/adapters/embeddings/safetensors.js';
import { StaticEmbedder } from '../../src/adapters/embeddings/static.js';
import { UnavailableError } from '../../src/core/errors.js';
import { TEST_MODEL_PATH, tempDir } from '../support/env.js';
import { embeddingsFile, safetensorsBytes, tableBytes, TINY_VOCAB, writeTinyModel, type TinyDtype } from '../support/tiny-static-model.js';

let dir: { path: string; remove(): Promise<void> };
beforeAll(async () => { dir = await tempDir('static-embedder-'); });
afterAll(async () => { await dir.remove(); });

const id = (token: string): number => TINY_VOCAB.indexOf(token);

/** Distinct rows exactly representable in F32, F16 and I8 (small integers and halves). */
function tinyRows(): number[][] {
  return TINY_VOCAB.map((token, i) => (token.startsWith('[') ? [0, 0, 0, 0] : [i, -i, 1, i % 2 === 0 ? 2 : -3]));
}

function unit(values: number[]): number[] {
  const norm = Math.hypot(...values);
  return values.map((v) => v / norm);
}

function expectClose(actual: Float32Array, expected: number[]): void {
  expect(actual).toHaveLength(expected.length);
  expected.forEach((v, i) => expect(actual[i]).toBeCloseTo(v, 5));
}

async function tinyEmbedder(name: string, opts: Parameters<typeof writeTinyModel>[1] = {}): Promise<StaticEmbedder> {
  const folder = await writeTinyModel(join(dir.path, name), opts);
  return new StaticEmbedder({ folder, modelId: name, origin: `test folder ${name}` });
}

describe('static embedder: tables in each stored dtype', () => {
  for (const dtype of ['F32', 'F16', 'I8'] as TinyDtype[]) {
    it(`reads an ${dtype} table: the normalised mean of the tokens' rows`, async () => {
      const rows = tinyRows();
      const embedder = await tinyEmbedder(`tiny-${dtype}`, { rows, dtype });
      expect(await embedder.load()).toEqual({ provider: 'local', model: `tiny-${dtype}`, dimension: 4 });
      const [hello, sentence] = await embedder.embed(['Hello', 'hello world, parse CSVs']);
      expectClose(hello, unit(rows[id('hello')]));
      // hello world , parse csv ##s: the comma is unknown (skipped), every other row counts once.
      const sum = ['hello', 'world', 'parse', 'csv', '##s'].map((t) => rows[id(t)]).reduce((a, r) => a.map((v, i) => v + r[i]));
      expectClose(sentence, unit(sum));
    });
  }

  it('decodes half-precision values exactly, negative and subnormal ones included', async () => {
    const tiny = 2 ** -20; // subnormal in F16
    const rows = TINY_VOCAB.map(() => [0, 0, 0, 0]);
    rows[id('file')] = [tiny, -tiny, 0, 0];
    rows[id('hello')] = [-0.5, 0.25, 1.5, -2];
    const embedder = await tinyEmbedder('tiny-f16-values', { rows, dtype: 'F16' });
    const [file, hello] = await embedder.embed(['file', 'hello']);
    expectClose(file, unit([1, -1, 0, 0]));
    expectClose(hello, unit([-0.5, 0.25, 1.5, -2]));
  });

  it('gives a zero vector, never NaN, when every token is unknown or the text is empty', async () => {
    const embedder = await tinyEmbedder('tiny-unknown');
    for (const vector of await embedder.embed(['😀 ✨', '', '   ', '\u200b'])) {
      expect(vector).toHaveLength(4);
      expect([...vector].every((x) => x === 0)).toBe(true);
    }
  });

  it('counts only the first 512 tokens, and a long text costs no more than its prefix', async () => {
    const rows = tinyRows();
    const embedder = await tinyEmbedder('tiny-long', { rows });
    const text = `${'hello '.repeat(512)}${'world '.repeat(200_000)}`;
    const [vector] = await embedder.embed([text]);
    expectClose(vector, unit(rows[id('hello')]));
    const [mixed] = await embedder.embed([`${'hello '.repeat(500)}${'world '.repeat(20)}`]);
    const sum = rows[id('hello')].map((h, i) => 500 * h + 12 * rows[id('world')][i]);
    expectClose(mixed, unit(sum));
  });
});

describe('static embedder: broken model files are refused with the file and the fault', () => {
  const table = tableBytes(tinyRows(), 'F32');
  const header = (entry: object): Uint8Array => safetensorsBytes({ embeddings: entry }, table);

  async function loadFailure(name: string, safetensors: Uint8Array): Promise<string> {
    const embedder = await tinyEmbedder(name, { safetensors });
    const err = await embedder.load().then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    const message = (err as Error).message;
    expect(message).toContain(join(dir.path, name, 'model.safetensors'));
    expect(message).toContain('test folder');
    return message;
  }

  it('a truncated file', async () => {
    const whole = embeddingsFile(tinyRows(), 'F32');
    expect(await loadFailure('cut-data', whole.subarray(0, whole.length - 10))).toMatch(/spans bytes 0–128 but the data section has 118 bytes/);
    expect(await loadFailure('cut-header', whole.subarray(0, 20))).toMatch(/truncated: the header claims \d+ bytes/);
    expect(await loadFailure('cut-length', whole.subarray(0, 5))).toMatch(/truncated: 5 bytes/);
  });

  it('a mislabelled dtype or shape', async () => {
    expect(await loadFailure('f16-label', header({ dtype: 'F16', shape: [8, 4], data_offsets: [0, 128] })))
      .toMatch(/holds 128 bytes but F16 \[8,4\] needs 64 \(mislabelled dtype or shape\)/);
    expect(await loadFailure('bf16', header({ dtype: 'BF16', shape: [8, 4], data_offsets: [0, 64] }))).toMatch(/dtype "BF16"; supported: F32, F16, I8/);
    expect(await loadFailure('rows', safetensorsBytes({ embeddings: { dtype: 'F32', shape: [4, 8], data_offsets: [0, 128] } }, table)))
      .toMatch(/"embeddings" has 4 rows but tokenizer.json has 8 tokens/);
    expect(await loadFailure('name', safetensorsBytes({ weights: { dtype: 'F32', shape: [8, 4], data_offsets: [0, 128] } }, table)))
      .toMatch(/no "embeddings" tensor \(found: weights\)/);
  });

  it('an oversized header or byte range', async () => {
    const huge = new Uint8Array(16);
    new DataView(huge.buffer).setBigUint64(0, 2n ** 40n, true);
    expect(await loadFailure('huge-header', huge)).toMatch(/header length 1099511627776 exceeds the 104857600-byte limit/);
    expect(await loadFailure('past-end', header({ dtype: 'F32', shape: [8, 8], data_offsets: [0, 256] }))).toMatch(/spans bytes 0–256/);
    expect(await loadFailure('not-json', safetensorsBytes({}, table).map((b, i) => (i === 8 ? 0x7b : i === 9 ? 0x7b : b))))
      .toMatch(/header is not valid JSON/);
  });

  it('reads the data after an unaligned header by copying it to an aligned buffer', () => {
    let text = JSON.stringify({ embeddings: { dtype: 'F32', shape: [8, 4], data_offsets: [0, 128] } });
    while ((8 + text.length) % 4 !== 1) text += ' ';
    const json = Buffer.from(text);
    const bytes = new Uint8Array(8 + json.length + table.length);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
    bytes.set(json, 8);
    bytes.set(table, 8 + json.length);
    const tensor = parseSafetensors(bytes, 'unaligned.safetensors').get('embeddings');
    expect(new Float32Array(tensor!.bytes.buffer, tensor!.bytes.byteOffset, 32)[4 * id('hello')]).toBe(id('hello'));
    expect(() => parseSafetensors(bytes.subarray(0, 3), 'x.safetensors')).toThrow(SafetensorsError);
  });
});

describe('the bundled model', () => {
  it('is an F16 [30522, 384] table whose vectors are unit length', async () => {
    const bytes = await readFile(join(TEST_MODEL_PATH, 'model.safetensors'));
    const tensor = parseSafetensors(bytes, 'bundled');
    expect([...tensor.keys()]).toEqual(['embeddings']);
    expect(tensor.get('embeddings')).toMatchObject({ dtype: 'F16', shape: [30522, 384] });

    const embedder = new StaticEmbedder({ folder: TEST_MODEL_PATH, modelId: 'use-lite-static' });
    const [a, b, c] = await embedder.embed([
      'parse a CSV file and compute the average of a column',
      'read a csv and calculate the mean of one column',
      'send an email notification when the build fails',
    ]);
    const dot = (x: Float32Array, y: Float32Array): number => x.reduce((s, v, i) => s + v * y[i], 0);
    expect(dot(a, a)).toBeCloseTo(1, 5);
    expect(dot(a, b)).toBeGreaterThan(dot(a, c));
  });
});
