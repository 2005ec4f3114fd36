-- 0011 evaluation runs (docs/behavior.md "Evaluation runs"): every evaluation is kept as a run
-- of cases. The columns are what listings filter and sort by; the rest of a run or case is its
-- wire form in `body`. A run's cases go with it; at most one run per label is its baseline.
CREATE TABLE evaluation_runs (
  tenant_id  text        NOT NULL,
  project_id text        NOT NULL,
  id         text        NOT NULL,
  created_at timestamptz NOT NULL,
  label      text,
  branch     text,
  status     text        NOT NULL CHECK (status IN ('running', 'passed', 'regressed', 'failed')),
  blessed    boolean     NOT NULL DEFAULT false,
  body       jsonb       NOT NULL,
  PRIMARY KEY (tenant_id, project_id, id)
);
CREATE INDEX evaluation_runs_label_idx ON evaluation_runs (tenant_id, project_id, label, id DESC);
CREATE INDEX evaluation_runs_branch_idx ON evaluation_runs (tenant_id, project_id, branch, id DESC);
CREATE UNIQUE INDEX evaluation_runs_baseline_idx ON evaluation_runs (tenant_id, project_id, label) WHERE blessed;

CREATE TABLE evaluation_cases (
  tenant_id  text   NOT NULL,
  project_id text   NOT NULL,
  run_id     text   NOT NULL,
  case_id    text   NOT NULL,
  seq        bigint GENERATED ALWAYS AS IDENTITY,
  body       jsonb  NOT NULL,
  PRIMARY KEY (tenant_id, project_id, run_id, case_id),
  FOREIGN KEY (tenant_id, project_id, run_id) REFERENCES evaluation_runs (tenant_id, project_id, id) ON DELETE CASCADE
);
