import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { EmbeddingUnavailableError } from '../../core/errors.js';
import type { EmbeddingInfo } from '../../core/types.js';
import { DEFAULT_EMBEDDING_DIMENSION as DEFAULT_DIMENSION, type Embedder } from '../../ports/embedder.js';
import { silentLogger, type Logger } from '../../ports/observability.js';
import { embeddingTable, type EmbeddingTable } from './embedding-table.js';
import { readSafetensors, SafetensorsError } from './safetensors.js';
import { WordTokenCache, wordByWordApplies } from './word-tokens.js';

/**
 * Static embeddings in the model2vec layout (config.json, tokenizer.json, model.safetensors
 * with one `embeddings` tensor [vocabulary, dimension]): a text's vector is the L2-normalised
 * mean of its tokens' rows. A table lookup needs no model runtime, so this is plain code.
 */
export interface StaticEmbedderOptions {
  /** Folder holding the model files. */
  folder: string;
  /** The identity recorded by the store (see core/embedding-model.ts). */
  modelId: string;
  /** How the user chose this model, for error messages (e.g. SERVICE_EMBEDDING_MODEL_PATH="…"). */
  origin?: string;
  /** Runs before the files are read, on every load attempt (e.g. downloading them from the hub). */
  prepare?: () => Promise<void>;
  /** Tokens per text that count (model2vec's default: 512). */
  maxTokens?: number;
  logger?: Logger;
}

const DEFAULT_MAX_TOKENS = 512;
/** Characters tokenised first for a long text: enough for 512 tokens in most prose. */
const FIRST_PREFIX_CHARS = 4096;

interface LoadedModel {
  tokenizer: Tokenizer;
  table: EmbeddingTable;
  /** Ids whose rows never count: the unknown token (model2vec drops it too). */
  skipped: Set<number>;
  /** Word-by-word ids of plain ASCII text (null: this tokenizer must see whole texts). */
  words: WordTokenCache | null;
}

export class StaticEmbedder implements Embedder {
  private readonly maxTokens: number;
  private readonly logger: Logger;
  private loading: Promise<LoadedModel> | null = null;
  private dimension = DEFAULT_DIMENSION;
  private sum = new Float64Array(0);

  constructor(private readonly opts: StaticEmbedderOptions) {
    this.maxTokens = opts.maxTokens ?? DEFAULT_MAX_TOKENS;
    this.logger = opts.logger ?? silentLogger;
  }

  get info(): EmbeddingInfo {
    return { provider: 'local', model: this.opts.modelId, dimension: this.dimension };
  }

  /** Reads the model once; concurrent callers share the read; a failed read is retried next call. */
  async load(): Promise<EmbeddingInfo> {
    await this.loaded();
    return this.info;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const model = await this.loaded();
    return texts.map((text) => this.embedOne(model, text));
  }

  async close(): Promise<void> {
    // Nothing to release: the table is ordinary memory.
    this.loading = null;
  }

  private embedOne({ tokenizer, table, skipped, words }: LoadedModel, text: string): Float32Array {
    // One sum reused (this runs start to end without a pause): a fresh 3 KB buffer per query
    // was an allocation outside the JS heap, freed only by a later garbage collection.
    if (this.sum.length !== table.dimension) this.sum = new Float64Array(table.dimension);
    const sum = this.sum.fill(0);
    for (const id of words?.ids(text, this.maxTokens) ?? this.tokenIds(tokenizer, text)) {
      if (!skipped.has(id)) table.addRow(id, sum);
    }
    return unitOrZero(sum);
  }

  /**
   * The first `maxTokens` ids without special tokens. A long text is tokenised by growing
   * prefixes cut at whitespace (tokens never span whitespace, so a prefix's tokens are the
   * text's first tokens): a 1 MB body costs a few kilobytes of tokenising, not the whole.
   */
  private tokenIds(tokenizer: Tokenizer, text: string): number[] {
    const encode = (part: string): number[] => tokenizer.encode(part, { add_special_tokens: false }).ids;
    for (let limit = FIRST_PREFIX_CHARS; limit < text.length; limit *= 4) {
      const cut = lastWhitespaceBefore(text, limit);
      if (cut <= 0) break;
      const ids = encode(text.slice(0, cut));
      if (ids.length >= this.maxTokens) return ids.slice(0, this.maxTokens);
    }
    return encode(text).slice(0, this.maxTokens);
  }

  private loaded(): Promise<LoadedModel> {
    if (!this.loading) {
      const loading = this.read();
      loading.catch(() => {
        if (this.loading === loading) this.loading = null;
      });
      this.loading = loading;
    }
    return this.loading;
  }

  private async read(): Promise<LoadedModel> {
    const { folder, modelId } = this.opts;
    const started = performance.now();
    try {
      await this.opts.prepare?.();
      // config.json carries nothing the arithmetic needs (vectors are always normalised, as
      // the Embedder port requires), but a folder without one is not a model folder.
      const [, tokenizerJson, tokenizerConfig, tensors] = await Promise.all([
        readJson(join(folder, 'config.json')),
        readJson(join(folder, 'tokenizer.json')),
        readJson(join(folder, 'tokenizer_config.json')).catch(() => ({})),
        readSafetensors(join(folder, 'model.safetensors')),
      ]);
      const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
      const file = join(folder, 'model.safetensors');
      const tensor = tensors.get('embeddings');
      const others = [...tensors.keys()].filter((name) => name !== 'embeddings');
      if (!tensor) throw new SafetensorsError(file, `no "embeddings" tensor (found: ${others.join(', ') || 'none'})`);
      if (others.length > 0) throw new SafetensorsError(file, `unsupported tensors besides "embeddings": ${others.join(', ')}`);
      if (tensor.shape.length !== 2 || tensor.shape[1] === 0) {
        throw new SafetensorsError(file, `"embeddings" must be [vocabulary, dimension], got ${JSON.stringify(tensor.shape)}`);
      }
      const vocabulary = vocabularySize(tokenizer, tokenizerJson);
      if (tensor.shape[0] !== vocabulary) {
        throw new SafetensorsError(file, `"embeddings" has ${tensor.shape[0]} rows but tokenizer.json has ${vocabulary} tokens`);
      }
      const table = embeddingTable(tensor);
      const skipped = new Set<number>();
      const unk = unknownTokenId(tokenizer, tokenizerJson);
      if (unk !== undefined) skipped.add(unk);
      this.dimension = table.dimension;
      this.logger.info(
        { model: modelId, dimension: table.dimension, dtype: table.dtype, ms: Math.round(performance.now() - started) },
        'local embedding model loaded',
      );
      const encode = (part: string): number[] => tokenizer.encode(part, { add_special_tokens: false }).ids;
      const words = wordByWordApplies(tokenizerJson) ? new WordTokenCache(encode) : null;
      return { tokenizer, table, skipped, words };
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      const origin = this.opts.origin ?? folder;
      throw new EmbeddingUnavailableError(
        `cannot load the local embedding model from ${origin}: ${reason}. A static model folder holds config.json, ` +
          'tokenizer.json and model.safetensors (model2vec layout); a transformers.js folder holds config.json, tokenizer.json and onnx/model_quantized.onnx.',
        { cause: err },
      );
    }
  }
}

async function readJson(path: string): Promise<object> {
  const text = await readFile(path, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${path} is not a JSON object`);
  return value;
}

/** Ids the tokenizer can emit: its model's vocabulary plus added tokens (without building a map). */
function vocabularySize(tokenizer: Tokenizer, tokenizerJson: object): number {
  const modelVocab = (tokenizer.model as unknown as { vocab?: unknown } | null)?.vocab;
  let size = Array.isArray(modelVocab) ? modelVocab.length : tokenizer.get_vocab(true).size;
  const added = (tokenizerJson as { added_tokens?: unknown }).added_tokens;
  for (const token of Array.isArray(added) ? (added as { id?: unknown }[]) : []) {
    if (typeof token.id === 'number') size = Math.max(size, token.id + 1);
  }
  return size;
}

function unknownTokenId(tokenizer: Tokenizer, tokenizerJson: object): number | undefined {
  const model = (tokenizerJson as { model?: { unk_token?: unknown } }).model;
  return typeof model?.unk_token === 'string' ? tokenizer.token_to_id(model.unk_token) : undefined;
}

function lastWhitespaceBefore(text: string, limit: number): number {
  for (let i = Math.min(limit, text.length - 1); i > 0; i--) {
    if (/\s/.test(text[i])) return i;
  }
  return -1;
}

/** The unit vector along `sum`; a zero (or non-finite) sum has no direction and stays zero, never NaN. */
function unitOrZero(sum: Float64Array): Float32Array {
  let squares = 0;
  for (const x of sum) squares += x * x;
  const norm = Math.sqrt(squares);
  const out = new Float32Array(sum.length);
  if (norm > 0 && Number.isFinite(norm)) for (let i = 0; i < sum.length; i++) out[i] = sum[i] / norm;
  return out;
}
