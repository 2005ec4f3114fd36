-- 0013: the stored code as recall's second keyword field (docs/behavior.md "Recall" 2).
-- The keyword side is BM25F over task and code: each field has its own length normalisation,
-- the code's normalised frequency is weighted (SERVICE_RECALL_CODE_WEIGHT) and added to the
-- task's, and a term's document frequency counts the patterns holding it in either field.
--   patterns.code_terms   the code's terms, capped (core/code-terms.ts codeTermsOf: identifiers
--                         split on snake_case and camelCase, lower case, string literals and
--                         comments as words; the first 128 terms): a stored generated column,
--                         so learn and import store it and this migration fills it;
--   recall_postings.field 0 for a task posting, 1 for a code posting (tf and len are the
--                         field's own);
--   recall_doc_stats.total_code_terms  the code terms' total (the code's average length);
--   recall_term_stats.df  now over task or code.
-- Adding a stored generated column rewrites the table once; on a large store run it in a
-- maintenance window.

CREATE FUNCTION recall_code_terms(code text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path FROM CURRENT
RETURN (ARRAY(
  SELECT t.term
  FROM unnest(regexp_split_to_array(
    lower(regexp_replace(regexp_replace(code, '([a-z0-9])([A-Z])', '\1 \2', 'g'), '([A-Z])([A-Z][a-z])', '\1 \2', 'g')),
    '[^[:alnum:]]+'
  )) WITH ORDINALITY AS t(term, n)
  WHERE t.term <> '' AND octet_length(t.term) <= 256 ORDER BY t.n
))[1:128];

ALTER TABLE patterns ADD COLUMN code_terms text[] GENERATED ALWAYS AS (recall_code_terms(code)) STORED;

ALTER TABLE recall_postings ADD COLUMN field smallint NOT NULL DEFAULT 0 CHECK (field IN (0, 1));
ALTER TABLE recall_postings DROP CONSTRAINT recall_postings_pkey;
ALTER TABLE recall_postings ADD PRIMARY KEY (tenant_id, project_id, term, pattern_id, field) INCLUDE (tf, len);

ALTER TABLE recall_doc_stats ADD COLUMN total_code_terms bigint NOT NULL DEFAULT 0 CHECK (total_code_terms >= 0);

-- 0007's per-row change, with the code's terms: replaced (its only caller is recall_stats_update below).
DROP FUNCTION recall_stats_change(text, text, text[], integer, vector, integer);
CREATE FUNCTION recall_stats_change(t text, p text, task_terms text[], code_terms text[], d integer, e vector, sign integer)
RETURNS void LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO recall_doc_stats AS s (tenant_id, project_id, docs, total_terms, total_code_terms)
  VALUES (t, p, GREATEST(sign, 0), GREATEST(sign, 0) * cardinality(task_terms), GREATEST(sign, 0) * cardinality(code_terms))
  ON CONFLICT (tenant_id, project_id) DO UPDATE
    SET docs = s.docs + sign, total_terms = s.total_terms + sign * cardinality(task_terms),
        total_code_terms = s.total_code_terms + sign * cardinality(code_terms);
  INSERT INTO recall_term_stats AS s (tenant_id, project_id, term, df)
  SELECT t, p, u.term, GREATEST(sign, 0) FROM (SELECT DISTINCT unnest(task_terms || code_terms) AS term) u ORDER BY u.term
  ON CONFLICT (tenant_id, project_id, term) DO UPDATE SET df = s.df + sign;
  IF sign < 0 THEN
    DELETE FROM recall_term_stats WHERE tenant_id = t AND project_id = p AND term = ANY(task_terms || code_terms) AND df = 0;
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

CREATE OR REPLACE FUNCTION recall_stats_insert() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO recall_doc_stats AS s (tenant_id, project_id, docs, total_terms, total_code_terms)
  SELECT tenant_id, project_id, count(*), sum(cardinality(terms)), sum(cardinality(code_terms)) FROM new_rows GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (tenant_id, project_id) DO UPDATE SET docs = s.docs + EXCLUDED.docs, total_terms = s.total_terms + EXCLUDED.total_terms,
    total_code_terms = s.total_code_terms + EXCLUDED.total_code_terms;
  INSERT INTO recall_term_stats AS s (tenant_id, project_id, term, df)
  SELECT n.tenant_id, n.project_id, u.term, count(*)
  FROM new_rows n, LATERAL (SELECT DISTINCT unnest(n.terms || n.code_terms) AS term) u GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (tenant_id, project_id, term) DO UPDATE SET df = s.df + EXCLUDED.df;
  INSERT INTO recall_vector_sums AS s (tenant_id, project_id, dim, vector_sum, vectors)
  SELECT tenant_id, project_id, dim, sum(l2_normalize(embedding)), count(*)
  FROM new_rows WHERE vector_norm(embedding) > 0 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (tenant_id, project_id, dim) DO UPDATE SET vector_sum = s.vector_sum + EXCLUDED.vector_sum, vectors = s.vectors + EXCLUDED.vectors;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION recall_stats_delete() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE recall_doc_stats s SET docs = s.docs - o.docs, total_terms = s.total_terms - o.total_terms,
    total_code_terms = s.total_code_terms - o.total_code_terms
  FROM (SELECT tenant_id, project_id, count(*) AS docs, sum(cardinality(terms)) AS total_terms, sum(cardinality(code_terms)) AS total_code_terms
        FROM old_rows GROUP BY 1, 2 ORDER BY 1, 2) o
  WHERE s.tenant_id = o.tenant_id AND s.project_id = o.project_id;
  UPDATE recall_term_stats s SET df = s.df - g.df
  FROM (SELECT o.tenant_id, o.project_id, u.term, count(*) AS df
        FROM old_rows o, LATERAL (SELECT DISTINCT unnest(o.terms || o.code_terms) AS term) u GROUP BY 1, 2, 3) g
  WHERE s.tenant_id = g.tenant_id AND s.project_id = g.project_id AND s.term = g.term;
  -- A separate statement: one statement cannot both update a row and delete it.
  DELETE FROM recall_term_stats s
  USING (SELECT DISTINCT o.tenant_id, o.project_id, unnest(o.terms || o.code_terms) AS term FROM old_rows o) g
  WHERE s.tenant_id = g.tenant_id AND s.project_id = g.project_id AND s.term = g.term AND s.df = 0;
  UPDATE recall_vector_sums s SET vector_sum = s.vector_sum - o.vector_sum, vectors = s.vectors - o.vectors
  FROM (SELECT tenant_id, project_id, dim, sum(l2_normalize(embedding)) AS vector_sum, count(*) AS vectors
        FROM old_rows WHERE vector_norm(embedding) > 0 GROUP BY 1, 2, 3) o
  WHERE s.tenant_id = o.tenant_id AND s.project_id = o.project_id AND s.dim = o.dim;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION recall_stats_update() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM recall_stats_change(OLD.tenant_id, OLD.project_id, OLD.terms, OLD.code_terms, OLD.dim, OLD.embedding, -1);
  PERFORM recall_stats_change(NEW.tenant_id, NEW.project_id, NEW.terms, NEW.code_terms, NEW.dim, NEW.embedding, 1);
  RETURN NULL;
END
$$;

DROP TRIGGER recall_stats_update ON patterns;
CREATE TRIGGER recall_stats_update AFTER UPDATE OF task, code, embedding ON patterns
  FOR EACH ROW WHEN (OLD.task IS DISTINCT FROM NEW.task OR OLD.code IS DISTINCT FROM NEW.code OR OLD.embedding IS DISTINCT FROM NEW.embedding)
  EXECUTE FUNCTION recall_stats_update();

-- Postings of both fields: one row per (pattern, distinct term, field).
CREATE OR REPLACE FUNCTION recall_postings_add() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO recall_postings (tenant_id, project_id, term, pattern_id, field, tf, len)
  SELECT n.tenant_id, n.project_id, u.term, n.id, 0::smallint, count(*), cardinality(n.terms)
  FROM new_rows n, unnest(n.terms) AS u(term)
  GROUP BY n.tenant_id, n.project_id, u.term, n.id, cardinality(n.terms)
  UNION ALL
  SELECT n.tenant_id, n.project_id, u.term, n.id, 1::smallint, count(*), cardinality(n.code_terms)
  FROM new_rows n, unnest(n.code_terms) AS u(term)
  GROUP BY n.tenant_id, n.project_id, u.term, n.id, cardinality(n.code_terms)
  ORDER BY 1, 2, 3, 4, 5;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION recall_postings_remove() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM recall_postings r USING old_rows o
  WHERE r.tenant_id = o.tenant_id AND r.project_id = o.project_id AND r.pattern_id = o.id AND r.term = ANY(o.terms || o.code_terms);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION recall_postings_update() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM recall_postings
  WHERE tenant_id = OLD.tenant_id AND project_id = OLD.project_id AND pattern_id = OLD.id AND term = ANY(OLD.terms || OLD.code_terms);
  INSERT INTO recall_postings (tenant_id, project_id, term, pattern_id, field, tf, len)
  SELECT NEW.tenant_id, NEW.project_id, u.term, NEW.id, 0::smallint, count(*), cardinality(NEW.terms)
  FROM unnest(NEW.terms) AS u(term) GROUP BY u.term
  UNION ALL
  SELECT NEW.tenant_id, NEW.project_id, u.term, NEW.id, 1::smallint, count(*), cardinality(NEW.code_terms)
  FROM unnest(NEW.code_terms) AS u(term) GROUP BY u.term
  ORDER BY 3, 5;
  RETURN NULL;
END
$$;

DROP TRIGGER recall_postings_update ON patterns;
CREATE TRIGGER recall_postings_update AFTER UPDATE OF task, code, tenant_id, project_id, id ON patterns
  FOR EACH ROW WHEN (OLD.task IS DISTINCT FROM NEW.task OR OLD.code IS DISTINCT FROM NEW.code
    OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id OR OLD.project_id IS DISTINCT FROM NEW.project_id OR OLD.id IS DISTINCT FROM NEW.id)
  EXECUTE FUNCTION recall_postings_update();

-- The patterns already stored: their code postings, code lengths and document frequencies over both fields.
INSERT INTO recall_postings (tenant_id, project_id, term, pattern_id, field, tf, len)
SELECT p.tenant_id, p.project_id, u.term, p.id, 1::smallint, count(*), cardinality(p.code_terms)
FROM patterns p, unnest(p.code_terms) AS u(term)
GROUP BY p.tenant_id, p.project_id, u.term, p.id, cardinality(p.code_terms);

UPDATE recall_doc_stats s SET total_code_terms = c.total
FROM (SELECT tenant_id, project_id, coalesce(sum(cardinality(code_terms)), 0) AS total FROM patterns GROUP BY 1, 2) c
WHERE s.tenant_id = c.tenant_id AND s.project_id = c.project_id;

DELETE FROM recall_term_stats;
INSERT INTO recall_term_stats (tenant_id, project_id, term, df)
SELECT p.tenant_id, p.project_id, u.term, count(*)
FROM patterns p, LATERAL (SELECT DISTINCT unnest(p.terms || p.code_terms) AS term) u GROUP BY 1, 2, 3;

ANALYZE recall_postings;
