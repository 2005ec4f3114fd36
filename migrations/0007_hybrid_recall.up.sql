-- 0007: hybrid recall (issue 27; docs/behavior.md "Recall" 2).
-- Recall blends the cosine, centred on the project's mean vector, with BM25 over task text.
-- This migration adds what PostgreSQL needs for both, kept in the same transaction as every
-- insert, delete and task/vector change of a pattern (triggers, like pattern_counts):
--   patterns.terms       the task's terms (the service's tokenizer: lower case, letters and
--                        digits, everything else a separator), with a GIN index for the
--                        keyword candidates;
--   recall_doc_stats     per project: pattern count and total term count (average length);
--   recall_term_stats    per project and term: document frequency;
--   recall_vector_sums   per project and dimension: sum and count of the unit vectors (the
--                        mean recall centres on).
-- Adding a stored generated column rewrites the table once; on a large store run it in a
-- maintenance window.

-- search_path is pinned so the generated column and triggers find their objects whatever the
-- session's search_path is.
CREATE FUNCTION recall_terms(task text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path FROM CURRENT
RETURN array_remove(regexp_split_to_array(lower(task), '[^[:alnum:]]+'), '');

ALTER TABLE patterns ADD COLUMN terms text[] GENERATED ALWAYS AS (recall_terms(task)) STORED;
CREATE INDEX patterns_terms_gin ON patterns USING gin (terms);

CREATE TABLE recall_doc_stats (
  tenant_id   text NOT NULL,
  project_id  text NOT NULL,
  docs        bigint NOT NULL CHECK (docs >= 0),
  total_terms bigint NOT NULL CHECK (total_terms >= 0),
  PRIMARY KEY (tenant_id, project_id)
);

CREATE TABLE recall_term_stats (
  tenant_id  text NOT NULL,
  project_id text NOT NULL,
  term       text COLLATE "C" NOT NULL,
  df         bigint NOT NULL CHECK (df >= 0),
  PRIMARY KEY (tenant_id, project_id, term)
);

CREATE TABLE recall_vector_sums (
  tenant_id  text NOT NULL,
  project_id text NOT NULL,
  dim        integer NOT NULL,
  vector_sum vector NOT NULL,
  vectors    bigint NOT NULL CHECK (vectors >= 0),
  PRIMARY KEY (tenant_id, project_id, dim)
);

-- Adds (sign 1) or removes (sign -1) one pattern's figures. Rows are locked in a fixed order
-- (doc stats, terms sorted, vector sum), so concurrent writers of a project queue, never deadlock.
CREATE FUNCTION recall_stats_change(t text, p text, task_terms text[], d integer, e vector, sign integer)
RETURNS void LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO recall_doc_stats AS s (tenant_id, project_id, docs, total_terms)
  VALUES (t, p, GREATEST(sign, 0), GREATEST(sign, 0) * cardinality(task_terms))
  ON CONFLICT (tenant_id, project_id) DO UPDATE
    SET docs = s.docs + sign, total_terms = s.total_terms + sign * cardinality(task_terms);
  INSERT INTO recall_term_stats AS s (tenant_id, project_id, term, df)
  SELECT t, p, u.term, GREATEST(sign, 0) FROM (SELECT DISTINCT unnest(task_terms) AS term) u ORDER BY u.term
  ON CONFLICT (tenant_id, project_id, term) DO UPDATE SET df = s.df + sign;
  IF sign < 0 THEN
    DELETE FROM recall_term_stats WHERE tenant_id = t AND project_id = p AND term = ANY(task_terms) AND df = 0;
  END IF;
  IF vector_norm(e) > 0 THEN
    IF sign > 0 THEN
      INSERT INTO recall_vector_sums AS s (tenant_id, project_id, dim, vector_sum, vectors)
      VALUES (t, p, d, l2_normalize(e), 1)
      ON CONFLICT (tenant_id, project_id, dim) DO UPDATE SET vector_sum = s.vector_sum + l2_normalize(e), vectors = s.vectors + 1;
    ELSE
      UPDATE recall_vector_sums SET vector_sum = vector_sum - l2_normalize(e), vectors = vectors - 1
      WHERE tenant_id = t AND project_id = p AND dim = d;
    END IF;
  END IF;
END
$$;

-- Inserts and deletes may come many rows to a statement (import, governance deletes): one
-- aggregated change per project and statement.
CREATE FUNCTION recall_stats_insert() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO recall_doc_stats AS s (tenant_id, project_id, docs, total_terms)
  SELECT tenant_id, project_id, count(*), sum(cardinality(terms)) FROM new_rows GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (tenant_id, project_id) DO UPDATE SET docs = s.docs + EXCLUDED.docs, total_terms = s.total_terms + EXCLUDED.total_terms;
  INSERT INTO recall_term_stats AS s (tenant_id, project_id, term, df)
  SELECT n.tenant_id, n.project_id, u.term, count(*)
  FROM new_rows n, LATERAL (SELECT DISTINCT unnest(n.terms) AS term) u GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (tenant_id, project_id, term) DO UPDATE SET df = s.df + EXCLUDED.df;
  INSERT INTO recall_vector_sums AS s (tenant_id, project_id, dim, vector_sum, vectors)
  SELECT tenant_id, project_id, dim, sum(l2_normalize(embedding)), count(*)
  FROM new_rows WHERE vector_norm(embedding) > 0 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (tenant_id, project_id, dim) DO UPDATE SET vector_sum = s.vector_sum + EXCLUDED.vector_sum, vectors = s.vectors + EXCLUDED.vectors;
  RETURN NULL;
END
$$;

CREATE FUNCTION recall_stats_delete() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE recall_doc_stats s SET docs = s.docs - o.docs, total_terms = s.total_terms - o.total_terms
  FROM (SELECT tenant_id, project_id, count(*) AS docs, sum(cardinality(terms)) AS total_terms
        FROM old_rows GROUP BY 1, 2 ORDER BY 1, 2) o
  WHERE s.tenant_id = o.tenant_id AND s.project_id = o.project_id;
  UPDATE recall_term_stats s SET df = s.df - g.df
  FROM (SELECT o.tenant_id, o.project_id, u.term, count(*) AS df
        FROM old_rows o, LATERAL (SELECT DISTINCT unnest(o.terms) AS term) u GROUP BY 1, 2, 3) g
  WHERE s.tenant_id = g.tenant_id AND s.project_id = g.project_id AND s.term = g.term;
  -- A separate statement: one statement cannot both update a row and delete it.
  DELETE FROM recall_term_stats s
  USING (SELECT DISTINCT o.tenant_id, o.project_id, unnest(o.terms) AS term FROM old_rows o) g
  WHERE s.tenant_id = g.tenant_id AND s.project_id = g.project_id AND s.term = g.term AND s.df = 0;
  UPDATE recall_vector_sums s SET vector_sum = s.vector_sum - o.vector_sum, vectors = s.vectors - o.vectors
  FROM (SELECT tenant_id, project_id, dim, sum(l2_normalize(embedding)) AS vector_sum, count(*) AS vectors
        FROM old_rows WHERE vector_norm(embedding) > 0 GROUP BY 1, 2, 3) o
  WHERE s.tenant_id = o.tenant_id AND s.project_id = o.project_id AND s.dim = o.dim;
  RETURN NULL;
END
$$;

-- Updates of task or vector are one row at a time (learn's replace, reindex); the reuse bump
-- and classification changes touch neither and never fire this.
CREATE FUNCTION recall_stats_update() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM recall_stats_change(OLD.tenant_id, OLD.project_id, OLD.terms, OLD.dim, OLD.embedding, -1);
  PERFORM recall_stats_change(NEW.tenant_id, NEW.project_id, NEW.terms, NEW.dim, NEW.embedding, 1);
  RETURN NULL;
END
$$;

CREATE TRIGGER recall_stats_insert AFTER INSERT ON patterns
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION recall_stats_insert();
CREATE TRIGGER recall_stats_delete AFTER DELETE ON patterns
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION recall_stats_delete();
CREATE TRIGGER recall_stats_update AFTER UPDATE OF task, embedding ON patterns
  FOR EACH ROW WHEN (OLD.task IS DISTINCT FROM NEW.task OR OLD.embedding IS DISTINCT FROM NEW.embedding)
  EXECUTE FUNCTION recall_stats_update();

-- The figures of the patterns already stored.
INSERT INTO recall_doc_stats (tenant_id, project_id, docs, total_terms)
SELECT tenant_id, project_id, count(*), coalesce(sum(cardinality(terms)), 0) FROM patterns GROUP BY 1, 2;
INSERT INTO recall_term_stats (tenant_id, project_id, term, df)
SELECT p.tenant_id, p.project_id, u.term, count(*)
FROM patterns p, LATERAL (SELECT DISTINCT unnest(p.terms) AS term) u GROUP BY 1, 2, 3;
INSERT INTO recall_vector_sums (tenant_id, project_id, dim, vector_sum, vectors)
SELECT tenant_id, project_id, dim, sum(l2_normalize(embedding)), count(*)
FROM patterns WHERE vector_norm(embedding) > 0 GROUP BY 1, 2, 3;
