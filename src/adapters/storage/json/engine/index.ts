/**
 * The JSON store's search engine: the one entrance the repositories use (the layer rule in
 * eslint/layers.js refuses an import of any other engine file from outside engine/). What sits
 * behind it (WebAssembly kernels, float and int8 rows, the scan thread and its shared slots,
 * row selection, sliced scans) may change without a repository noticing.
 *
 * The interface, per scope, all in memory and rebuilt from the journal on load:
 * - VectorIndex<T>: unit vectors by id, each with the item (the pattern record) its search
 *   filter sees. `set` / `setEncoded` / `setItem` / `remove` change it; `search`,
 *   `searchInSlices` (hands the event loop back under a WorkBudget) and `searchExact` answer
 *   the best IndexHit<T>s by exact cosine, ties to the smaller id; `cosinesOf` and `vectorOf`
 *   read single rows.
 * - KeywordIndex: BM25 over each pattern's task; `stats` gives the corpus figures hybrid recall
 *   needs, `top` / `topInSlices` the best KeywordHits.
 * - VectorMean: the running mean of a scope's vectors and each pattern's dot with it.
 * - The vector forms the engine takes: `normalized` (unit length, so cosine is a dot product),
 *   `assertVector`, and `encodeVector`, the base64 Float32 form the journal stores and
 *   `VectorIndex.setEncoded` decodes straight into its rows.
 * - createQueryDots: outcome ranking's int8 comparisons on the int8 kernel (core's QueryDots),
 *   for recall on any storage.
 *
 * The engine reads and writes no files: durability is the repositories'
 * (scope-store.ts over ../durable/). Its only outside inputs are core's pure helpers. Which
 * storage has which search feature, and why: docs/behavior.md "Storages".
 */
export { VectorIndex } from './vector-index.js';
export type { IndexHit } from './hit-order.js';
export { KeywordIndex, type KeywordHit } from './keyword-index.js';
export { VectorMean } from './vector-mean.js';
export { assertVector, encodeVector, normalized } from './vector-codec.js';
export { createQueryDots } from './query-dots.js';
