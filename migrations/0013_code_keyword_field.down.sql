-- Back to 0009: the keyword side over task text alone (0007's and 0008's functions and
-- triggers), document frequencies over task terms only.
DROP TRIGGER recall_stats_update ON patterns;
DROP TRIGGER recall_postings_update ON patterns;

DELETE FROM recall_postings WHERE field = 1;
ALTER TABLE recall_postings DROP CONSTRAINT recall_postings_pkey;
ALTER TABLE recall_postings DROP COLUMN field;
ALTER TABLE recall_postings ADD PRIMARY KEY (tenant_id, project_id, term, pattern_id) INCLUDE (tf, len);

DROP FUNCTION recall_stats_change(text, text, text[], text[], integer, vector, integer);
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

CREATE OR REPLACE FUNCTION recall_stats_insert() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
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

CREATE OR REPLACE FUNCTION recall_stats_delete() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE recall_doc_stats s SET docs = s.docs - o.docs, total_terms = s.total_terms - o.total_terms
  FROM (SELECT tenant_id, project_id, count(*) AS docs, sum(cardinality(terms)) AS total_terms
        FROM old_rows GROUP BY 1, 2 ORDER BY 1, 2) o
  WHERE s.tenant_id = o.tenant_id AND s.project_id = o.project_id;
  UPDATE recall_term_stats s SET df = s.df - g.df
  FROM (SELECT o.tenant_id, o.project_id, u.term, count(*) AS df
        FROM old_rows o, LATERAL (SELECT DISTINCT unnest(o.terms) AS term) u GROUP BY 1, 2, 3) g
  WHERE s.tenant_id = g.tenant_id AND s.project_id = g.project_id AND s.term = g.term;
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

CREATE OR REPLACE FUNCTION recall_stats_update() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM recall_stats_change(OLD.tenant_id, OLD.project_id, OLD.terms, OLD.dim, OLD.embedding, -1);
  PERFORM recall_stats_change(NEW.tenant_id, NEW.project_id, NEW.terms, NEW.dim, NEW.embedding, 1);
  RETURN NULL;
END
$$;

CREATE TRIGGER recall_stats_update AFTER UPDATE OF task, embedding ON patterns
  FOR EACH ROW WHEN (OLD.task IS DISTINCT FROM NEW.task OR OLD.embedding IS DISTINCT FROM NEW.embedding)
  EXECUTE FUNCTION recall_stats_update();

CREATE OR REPLACE FUNCTION recall_postings_add() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO recall_postings (tenant_id, project_id, term, pattern_id, tf, len)
  SELECT n.tenant_id, n.project_id, u.term, n.id, count(*), cardinality(n.terms)
  FROM new_rows n, unnest(n.terms) AS u(term)
  GROUP BY n.tenant_id, n.project_id, u.term, n.id, cardinality(n.terms)
  ORDER BY 1, 2, 3, 4;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION recall_postings_remove() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM recall_postings r USING old_rows o
  WHERE r.tenant_id = o.tenant_id AND r.project_id = o.project_id AND r.pattern_id = o.id AND r.term = ANY(o.terms);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION recall_postings_update() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM recall_postings
  WHERE tenant_id = OLD.tenant_id AND project_id = OLD.project_id AND pattern_id = OLD.id AND term = ANY(OLD.terms);
  INSERT INTO recall_postings (tenant_id, project_id, term, pattern_id, tf, len)
  SELECT NEW.tenant_id, NEW.project_id, u.term, NEW.id, count(*), cardinality(NEW.terms)
  FROM unnest(NEW.terms) AS u(term) GROUP BY u.term ORDER BY u.term;
  RETURN NULL;
END
$$;

CREATE TRIGGER recall_postings_update AFTER UPDATE OF task, tenant_id, project_id, id ON patterns
  FOR EACH ROW WHEN (OLD.task IS DISTINCT FROM NEW.task OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id
    OR OLD.project_id IS DISTINCT FROM NEW.project_id OR OLD.id IS DISTINCT FROM NEW.id)
  EXECUTE FUNCTION recall_postings_update();

ALTER TABLE recall_doc_stats DROP COLUMN total_code_terms;
DELETE FROM recall_term_stats;
INSERT INTO recall_term_stats (tenant_id, project_id, term, df)
SELECT p.tenant_id, p.project_id, u.term, count(*)
FROM patterns p, LATERAL (SELECT DISTINCT unnest(p.terms) AS term) u GROUP BY 1, 2, 3;

ALTER TABLE patterns DROP COLUMN code_terms;
DROP FUNCTION recall_code_terms(text);
