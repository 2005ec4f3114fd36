-- 0010: recall traces and reported outcomes (docs/behavior.md "Outcomes").
-- Every recall leaves a trace (its query, normalised wording, int8 query vector and returned
-- pattern keys), written by the recall's own bookkeeping statement; outcomes reported against
-- it name one of those patterns. Both are purged after the outcome retention
-- (SERVICE_OUTCOME_RETENTION_DAYS) and go with their scope, and an outcome goes with its pattern
-- (deleted explicitly, like eval observations) or its trace (the foreign key).

CREATE TABLE recall_traces (
  tenant_id        text NOT NULL,
  project_id       text NOT NULL,
  recall_id        text NOT NULL,
  at               timestamptz NOT NULL,
  query            text NOT NULL,
  query_normalized text NOT NULL,
  -- int8 values as bytes, value ≈ byte / 127 · vector_scale; null without a query vector.
  query_vector     bytea,
  vector_scale     real,
  pattern_keys     text[] NOT NULL,
  PRIMARY KEY (tenant_id, project_id, recall_id)
);
-- Retention purges by time.
CREATE INDEX recall_traces_at_idx ON recall_traces (tenant_id, project_id, at);

CREATE TABLE recall_outcomes (
  tenant_id   text NOT NULL,
  project_id  text NOT NULL,
  recall_id   text NOT NULL,
  pattern_id  text NOT NULL,
  pattern_key text NOT NULL,
  passed      boolean NOT NULL,
  score       double precision,
  detail      text,
  source      text,
  at          timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, project_id, recall_id, pattern_id),
  FOREIGN KEY (tenant_id, project_id, recall_id) REFERENCES recall_traces (tenant_id, project_id, recall_id) ON DELETE CASCADE
);
-- Ranking reads each candidate's newest outcomes on every recall; deleting a pattern finds its outcomes.
CREATE INDEX recall_outcomes_pattern_idx ON recall_outcomes (tenant_id, project_id, pattern_id, at DESC);
