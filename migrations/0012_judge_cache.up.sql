-- 0012: the judge cache (docs/behavior.md "Judge cache"): evaluate's verdicts per project, keyed
-- on the hash of the evaluated text and the whole judge configuration (core/judge-cache-key.ts),
-- shared by every server process and CI runner of the project. Governance deletions remove a
-- project's rows with its other data.

CREATE TABLE judge_cache (
  tenant_id   text NOT NULL,
  project_id  text NOT NULL,
  cache_key   text NOT NULL,
  judgement   jsonb NOT NULL,
  stored_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, project_id, cache_key)
);

-- Pruning a project to its newest entries walks them by age.
CREATE INDEX judge_cache_age ON judge_cache (tenant_id, project_id, stored_at DESC);
