import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Writes small model folders in the model2vec layout for tests: a WordPiece tokenizer over
 * TINY_VOCAB and a safetensors table built here, so each dtype and each kind of broken file
 * can be made on purpose.
 */
export const TINY_VOCAB = ['[PAD]', '[UNK]', 'hello', 'world', 'parse', 'csv', '##s', 'file'];

export type TinyDtype = 'F32' | 'F16' | 'I8';

/** A tokenizer.json (BERT-style normaliser and pre-tokeniser, WordPiece) over `vocab`. */
export function tinyTokenizer(vocab: string[] = TINY_VOCAB): object {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
      { id: 0, content: '[PAD]', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
      { id: 1, content: '[UNK]', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    ],
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: null,
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab.map((token, id) => [token, id])),
    },
  };
}

/** float32 → IEEE half bits (round to nearest; enough for the exact test values). */
export function toHalfBits(value: number): number {
  const f32 = new Float32Array([value]);
  const bits = new Uint32Array(f32.buffer)[0];
  const sign = (bits >>> 16) & 0x8000;
  const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
  const mantissa = bits & 0x7fffff;
  if (value === 0) return sign;
  if (exponent <= 0) return sign | Math.round((mantissa | 0x800000) / 2 ** (14 - exponent));
  return sign | ((exponent << 10) + Math.round(mantissa / 8192));
}

/** The table's raw little-endian bytes in `dtype`. */
export function tableBytes(rows: number[][], dtype: TinyDtype): Uint8Array {
  const flat = rows.flat();
  if (dtype === 'F32') return new Uint8Array(new Float32Array(flat).buffer);
  if (dtype === 'I8') return new Uint8Array(new Int8Array(flat).buffer);
  return new Uint8Array(new Uint16Array(flat.map(toHalfBits)).buffer);
}

/** A safetensors file: header length, JSON header (padded to 8 bytes), data. */
export function safetensorsBytes(header: object, data: Uint8Array): Uint8Array {
  let json = JSON.stringify(header);
  while ((8 + Buffer.byteLength(json)) % 8 !== 0) json += ' ';
  const head = Buffer.from(json);
  const out = new Uint8Array(8 + head.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  out.set(data, 8 + head.length);
  return out;
}

/** A well-formed single-tensor file holding `rows` as `embeddings` in `dtype`. */
export function embeddingsFile(rows: number[][], dtype: TinyDtype): Uint8Array {
  const data = tableBytes(rows, dtype);
  return safetensorsBytes({ embeddings: { dtype, shape: [rows.length, rows[0].length], data_offsets: [0, data.length] } }, data);
}

/** Writes a complete model folder; `safetensors` replaces the table file (for broken files). */
export async function writeTinyModel(
  folder: string,
  opts: { rows?: number[][]; dtype?: TinyDtype; safetensors?: Uint8Array; vocab?: string[] } = {},
): Promise<string> {
  await mkdir(folder, { recursive: true });
  const rows = opts.rows ?? TINY_VOCAB.map((_, id) => (id < 2 ? [0, 0, 0, 0] : [id, 1, -1, 0.5]));
  await writeFile(join(folder, 'config.json'), JSON.stringify({ model_type: 'model2vec', normalize: true, hidden_dim: rows[0].length, reuse_tiers: { duplicate: 0.9 } }));
  await writeFile(join(folder, 'tokenizer.json'), JSON.stringify(tinyTokenizer(opts.vocab)));
  await writeFile(join(folder, 'model.safetensors'), opts.safetensors ?? embeddingsFile(rows, opts.dtype ?? 'F32'));
  return folder;
}
