import type { EmbeddingInfo } from '../core/types.js';

/** Turns texts into unit-length vectors. */
export interface Embedder {
  /** Provider, model id and dimension; recorded by the store so a model change is detected. */
  readonly info: EmbeddingInfo;
  /** Embeds a batch; one Float32Array of `info.dimension` per text, L2-normalised, same order. */
  embed(texts: string[]): Promise<Float32Array[]>;
  /**
   * How the last call that reached the model ended: `unknown` before any, `error` when the
   * model could not load or answer (health reports `degraded`). Optional: wrappers track it.
   */
  readiness?(): 'unknown' | 'ok' | 'error';
  /** Releases sessions/sockets. */
  close?(): Promise<void>;
}

/** The dimension an embedder reports before its model or table is loaded (all-MiniLM-L6-v2's, the default model). */
export const DEFAULT_EMBEDDING_DIMENSION = 384;
