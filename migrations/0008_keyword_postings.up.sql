-- 0008: keyword postings for hybrid recall (issues 27 and 28; docs/behavior.md "Recall" 2).
-- Recall's keyword side picks the patterns with the best BM25 over the query's selective
-- terms. Read from patterns.terms, that meant fetching every pattern holding such a term and
-- counting the term in its array, about 8 µs a row: 15–30 ms of PostgreSQL CPU per recall at
-- 10,000 patterns. This table holds the same facts one row per (pattern, distinct term): the
-- term's count in the task (tf) and the task's length in terms (len). The keyword side reads
-- only the posting rows of the query's terms through the primary key (index-only: tf and len
-- are included), sums BM25 per pattern and keeps the best: no pattern row is touched.
-- Kept in the same transaction as every insert, delete and task change of a pattern
-- (triggers, like recall_term_stats). The GIN index over patterns.terms that the keyword side
-- read before is dropped: nothing reads it now, and every write paid for it.

CREATE TABLE recall_postings (
  tenant_id  text NOT NULL,
  project_id text NOT NULL,
  term       text COLLATE "C" NOT NULL,
  pattern_id text COLLATE "C" NOT NULL,
  tf         integer NOT NULL CHECK (tf > 0),
  len        integer NOT NULL CHECK (len > 0),
  PRIMARY KEY (tenant_id, project_id, term, pattern_id) INCLUDE (tf, len)
);

-- Posting rows of a set of patterns: one per distinct term, with its count and the length.
CREATE FUNCTION recall_postings_add() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO recall_postings (tenant_id, project_id, term, pattern_id, tf, len)
  SELECT n.tenant_id, n.project_id, u.term, n.id, count(*), cardinality(n.terms)
  FROM new_rows n, unnest(n.terms) AS u(term)
  GROUP BY n.tenant_id, n.project_id, u.term, n.id, cardinality(n.terms)
  ORDER BY 1, 2, 3, 4;
  RETURN NULL;
END
$$;

CREATE FUNCTION recall_postings_remove() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM recall_postings r USING old_rows o
  WHERE r.tenant_id = o.tenant_id AND r.project_id = o.project_id AND r.pattern_id = o.id AND r.term = ANY(o.terms);
  RETURN NULL;
END
$$;

-- A task change (learn's replace) is one row at a time: its rows are replaced.
CREATE FUNCTION recall_postings_update() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM recall_postings
  WHERE tenant_id = OLD.tenant_id AND project_id = OLD.project_id AND pattern_id = OLD.id AND term = ANY(OLD.terms);
  INSERT INTO recall_postings (tenant_id, project_id, term, pattern_id, tf, len)
  SELECT NEW.tenant_id, NEW.project_id, u.term, NEW.id, count(*), cardinality(NEW.terms)
  FROM unnest(NEW.terms) AS u(term) GROUP BY u.term ORDER BY u.term;
  RETURN NULL;
END
$$;

CREATE TRIGGER recall_postings_insert AFTER INSERT ON patterns
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION recall_postings_add();
CREATE TRIGGER recall_postings_delete AFTER DELETE ON patterns
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION recall_postings_remove();
CREATE TRIGGER recall_postings_update AFTER UPDATE OF task, tenant_id, project_id, id ON patterns
  FOR EACH ROW WHEN (OLD.task IS DISTINCT FROM NEW.task OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id
    OR OLD.project_id IS DISTINCT FROM NEW.project_id OR OLD.id IS DISTINCT FROM NEW.id)
  EXECUTE FUNCTION recall_postings_update();

-- The postings of the patterns already stored.
INSERT INTO recall_postings (tenant_id, project_id, term, pattern_id, tf, len)
SELECT p.tenant_id, p.project_id, u.term, p.id, count(*), cardinality(p.terms)
FROM patterns p, unnest(p.terms) AS u(term)
GROUP BY p.tenant_id, p.project_id, u.term, p.id, cardinality(p.terms);

DROP INDEX patterns_terms_gin;

-- The planner's statistics of the new table, so the first recalls after the migration plan well.
ANALYZE recall_postings;
