import type { EmbeddingInfo } from '../core/types.js';

/** Turns texts into unit-length vectors. */
export interface Embedder {
  /** Provider, model id and dimension; recorded by the store so a model change is detected. */
  readonly info: EmbeddingInfo;
  /** Embeds a batch; one Float32Array of `info.dimension` per text, L2-normalised, same order. */
  embed(texts: string[]): Promise<Float32Array[]>;
  /** Releases sessions/sockets. */
  close?(): Promise<void>;
}
