-- Reverts 0003: full-precision HNSW indexes, the updated_at index and full pages, as 0001 made them.
ALTER TABLE patterns RESET (fillfactor);
CREATE INDEX patterns_retention_idx ON patterns (tenant_id, project_id, updated_at);
DROP INDEX patterns_embedding_384_hnsw;
DROP INDEX patterns_embedding_1536_hnsw;
CREATE INDEX patterns_embedding_384_hnsw ON patterns
  USING hnsw ((embedding::vector(384)) vector_cosine_ops) WHERE dim = 384;
CREATE INDEX patterns_embedding_1536_hnsw ON patterns
  USING hnsw ((embedding::vector(1536)) vector_cosine_ops) WHERE dim = 1536;
