-- Per-scope pattern counts kept by a trigger, so `count()` (every learn answers
-- pattern_count; health and quotas ask too) is one row lookup instead of a scan of the
-- scope's patterns, which costs tens of milliseconds at 100k wide rows.
CREATE TABLE pattern_counts (
  tenant_id  text NOT NULL,
  project_id text NOT NULL,
  n          bigint NOT NULL DEFAULT 0 CHECK (n >= 0),
  PRIMARY KEY (tenant_id, project_id)
);

INSERT INTO pattern_counts (tenant_id, project_id, n)
SELECT tenant_id, project_id, count(*) FROM patterns GROUP BY tenant_id, project_id;

-- search_path is pinned to the schema this migration runs in, so the trigger finds its table
-- whatever search_path the session that inserts or deletes happens to have.
CREATE FUNCTION pattern_counts_track() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO pattern_counts (tenant_id, project_id, n) VALUES (NEW.tenant_id, NEW.project_id, 1)
    ON CONFLICT (tenant_id, project_id) DO UPDATE SET n = pattern_counts.n + 1;
  ELSE
    UPDATE pattern_counts SET n = n - 1 WHERE tenant_id = OLD.tenant_id AND project_id = OLD.project_id;
  END IF;
  RETURN NULL;
END
$$;

-- Scope columns never change on an existing pattern, so inserts and deletes are all there is.
CREATE TRIGGER pattern_counts_track AFTER INSERT OR DELETE ON patterns
  FOR EACH ROW EXECUTE FUNCTION pattern_counts_track();
