-- 0003: keep vector search fast at 100k+ patterns.

-- 1. The HNSW indexes compare half-precision copies of the vectors (halfvec).
-- An HNSW walk touches about a thousand index pages per query, so it is fast only while the
-- index sits in shared_buffers. With full-precision vectors, 100k 384-d patterns make a
-- ~195 MB index, beyond PostgreSQL's default 128 MB of buffers, and queries then copy pages
-- in from the OS cache (5-15 ms instead of ~1.5 ms). Half precision halves the index
-- (~110 MB). Rank order is what the index needs, and float16 keeps it (cosine error around
-- 1e-4); the similarity the service reports is still computed from the full-precision
-- `embedding` column of the rows returned.
-- Building the new indexes reads every stored vector; on a large store give the session more
-- memory first (e.g. PGOPTIONS='-c maintenance_work_mem=1GB' service migrate up).
DROP INDEX patterns_embedding_384_hnsw;
DROP INDEX patterns_embedding_1536_hnsw;
CREATE INDEX patterns_embedding_384_hnsw ON patterns
  USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops) WHERE dim = 384;
CREATE INDEX patterns_embedding_1536_hnsw ON patterns
  USING hnsw ((embedding::halfvec(1536)) halfvec_cosine_ops) WHERE dim = 1536;

-- 2. Reuse counting (every recall that returns a reusable match) updates success_score,
-- reuse_count and updated_at of those patterns. An UPDATE that changes no indexed column and
-- finds room on its page is a HOT update: no index is touched. Otherwise PostgreSQL inserts
-- the new row version into every index, the HNSW graph included, which costs about 2 ms per
-- pattern at 100k. So:
-- - updated_at leaves the indexes: the (tenant, project, updated_at) index served no query
--   (retention walks a scope by primary key and tests each pattern's dates);
-- - pages are filled to 75%, keeping 2 KB free: TOAST keeps a row near or below 2 KB (long
--   code and output are moved out of line), so one new version always fits beside the old
--   one, and reading the page prunes dead versions. Existing pages gain that room as they
--   are rewritten (VACUUM FULL patterns applies it at once, in a maintenance window).
DROP INDEX patterns_retention_idx;
ALTER TABLE patterns SET (fillfactor = 75);
