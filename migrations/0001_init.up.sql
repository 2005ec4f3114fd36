-- 0001 init: every table the service needs (memory, governance, auth, jobs, billing).
-- Scope columns (tenant_id, project_id) are plain text on data tables rather than foreign
-- keys to projects: the env and dev auth modes address scopes that were never registered
-- as rows, and governance deletes scope data explicitly (see BEHAVIOR.md "Governance").

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE tenants (
  id                     text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  name                   text,
  retention_days         integer CHECK (retention_days BETWEEN 1 AND 36500),
  default_classification text NOT NULL DEFAULT 'internal'
                         CHECK (default_classification IN ('public', 'internal', 'confidential')),
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE projects (
  tenant_id              text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id                     text NOT NULL CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  name                   text,
  retention_days         integer CHECK (retention_days BETWEEN 1 AND 36500),
  default_classification text NOT NULL DEFAULT 'internal'
                         CHECK (default_classification IN ('public', 'internal', 'confidential')),
  max_patterns           integer CHECK (max_patterns >= 0),
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);

-- One row per pattern, its task embedding included: filters and scope then sit in the same
-- row the HNSW index points at, so pgvector's iterative scan applies them inside the search.
-- `embedding` is an untyped vector so one table serves several models; `dim` records its
-- length and selects the partial index built for that dimension.
CREATE TABLE patterns (
  tenant_id      text NOT NULL,
  project_id     text NOT NULL,
  -- "C" collation: ids are time-ordered and compared bytewise, like JS string order.
  id             text COLLATE "C" NOT NULL CHECK (id ~ '^[0-9a-z]+$'),
  task           text NOT NULL,
  code           text NOT NULL,
  output         text,
  eval_score     double precision NOT NULL CHECK (eval_score BETWEEN 0 AND 10),
  success_score  double precision NOT NULL,
  reuse_count    integer NOT NULL DEFAULT 0 CHECK (reuse_count >= 0),
  run_id         text,
  classification text NOT NULL DEFAULT 'internal' CHECK (classification IN ('public', 'internal', 'confidential')),
  source         text NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'sdk', 'cli', 'import')),
  author         text,
  expires_at     timestamptz,
  redacted       boolean NOT NULL DEFAULT false,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  last_aged_at   timestamptz,
  dim            integer NOT NULL CHECK (dim BETWEEN 1 AND 16000),
  embedding      vector NOT NULL,
  CHECK (vector_dims(embedding) = dim),
  PRIMARY KEY (tenant_id, project_id, id)
);

-- The two dimensions the service ships with: 384 (local MiniLM-class models) and 1536
-- (the hosted default). Queries cast the same way and repeat the `dim = N` predicate.
CREATE INDEX patterns_embedding_384_hnsw ON patterns
  USING hnsw ((embedding::vector(384)) vector_cosine_ops) WHERE dim = 384;
CREATE INDEX patterns_embedding_1536_hnsw ON patterns
  USING hnsw ((embedding::vector(1536)) vector_cosine_ops) WHERE dim = 1536;
-- Retention sweeps (expires_at, else updated_at + retention).
CREATE INDEX patterns_retention_idx ON patterns (tenant_id, project_id, updated_at);
CREATE INDEX patterns_expires_idx ON patterns (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE eval_observations (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id  text NOT NULL,
  project_id text NOT NULL,
  pattern_id text NOT NULL,
  score      double precision NOT NULL,
  at         timestamptz NOT NULL
);
CREATE INDEX eval_observations_pattern_idx
  ON eval_observations (tenant_id, project_id, pattern_id, at DESC, id DESC);

CREATE TABLE feedback_clusters (
  tenant_id       text NOT NULL,
  project_id      text NOT NULL,
  id              text NOT NULL,
  -- Keeps the listing in creation order, as the JSON store does.
  seq             bigint GENERATED ALWAYS AS IDENTITY,
  text            text NOT NULL,
  count           integer NOT NULL CHECK (count >= 0),
  score           double precision NOT NULL,
  last_seen       timestamptz NOT NULL,
  last_decayed_at timestamptz,
  tasks           text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (tenant_id, project_id, id)
);

CREATE TABLE pattern_skills (
  tenant_id  text NOT NULL,
  project_id text NOT NULL,
  pattern_id text NOT NULL,
  skill      text NOT NULL,
  position   integer NOT NULL,
  PRIMARY KEY (tenant_id, project_id, pattern_id, skill)
);
CREATE INDEX pattern_skills_skill_idx ON pattern_skills (tenant_id, project_id, skill);

CREATE TABLE metrics_counters (
  tenant_id       text NOT NULL,
  project_id      text NOT NULL,
  runs            bigint NOT NULL DEFAULT 0,
  successes       bigint NOT NULL DEFAULT 0,
  eval_sum        double precision NOT NULL DEFAULT 0,
  recalls         bigint NOT NULL DEFAULT 0,
  reusing_recalls bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, project_id)
);

-- ROI events: metadata only (never task content); the newest 10,000 per scope (by append
-- order, i.e. id) are kept. Reads apply that window exactly; appends trim the rows beyond it
-- in batches (see src/adapters/storage/postgres/global.ts).
CREATE TABLE roi_events (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id  text NOT NULL,
  project_id text NOT NULL,
  at         timestamptz NOT NULL,
  kind       text NOT NULL CHECK (kind IN ('learn', 'recall')),
  data       jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX roi_events_scope_idx ON roi_events (tenant_id, project_id, id);

CREATE TABLE analytics_rollups (
  tenant_id   text NOT NULL,
  project_id  text NOT NULL,
  window_name text NOT NULL CHECK (window_name IN ('hourly', 'daily', 'weekly')),
  computed_at timestamptz NOT NULL,
  data        jsonb NOT NULL,
  PRIMARY KEY (tenant_id, project_id, window_name)
);

-- Audit rows outlive deletions; governance clears `detail` instead of removing them.
CREATE TABLE audit_log (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at         timestamptz NOT NULL,
  kind       text NOT NULL,
  tenant_id  text,
  project_id text,
  actor      text,
  request_id text,
  ip         text,
  detail     jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_tenant_idx ON audit_log (tenant_id, id DESC);
CREATE INDEX audit_log_kind_idx ON audit_log (kind, id DESC);

-- Store-wide facts, e.g. key 'embedding' → {provider, model, dimension}.
CREATE TABLE meta (
  key        text PRIMARY KEY,
  value      jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- API keys: only the SHA-256 of the secret is stored; `prefix` is the display prefix.
CREATE TABLE api_keys (
  id           uuid PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  project_id   text NOT NULL,
  name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
  key_hash     bytea NOT NULL UNIQUE,
  prefix       text NOT NULL,
  role         text NOT NULL CHECK (role IN ('reader', 'editor', 'admin', 'owner')),
  max_patterns integer CHECK (max_patterns >= 0),
  expires_at   timestamptz,
  revoked_at   timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  rotated_from uuid REFERENCES api_keys (id) ON DELETE SET NULL,
  FOREIGN KEY (tenant_id, project_id) REFERENCES projects (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX api_keys_scope_idx ON api_keys (tenant_id, project_id, created_at);

-- Durable job queue; workers claim with FOR UPDATE SKIP LOCKED and refresh heartbeat_at.
CREATE TABLE jobs (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL,
  project_id   text NOT NULL,
  operation    text NOT NULL,
  status       text NOT NULL DEFAULT 'pending'
               CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
  payload      jsonb NOT NULL DEFAULT '{}',
  result       jsonb,
  error        text,
  attempts     integer NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL,
  started_at   timestamptz,
  completed_at timestamptz,
  heartbeat_at timestamptz,
  locked_by    text
);
CREATE INDEX jobs_pending_idx ON jobs (created_at) WHERE status = 'pending';
CREATE INDEX jobs_running_idx ON jobs (heartbeat_at) WHERE status = 'running';
CREATE INDEX jobs_scope_idx ON jobs (tenant_id, project_id, created_at DESC);

-- Monthly usage per tenant (UTC calendar month starting at period_start).
CREATE TABLE usage_counters (
  tenant_id    text NOT NULL,
  period_start date NOT NULL,
  metric       text NOT NULL CHECK (metric IN ('eval_runs', 'overage_runs', 'overage_cents')),
  value        bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, period_start, metric)
);

CREATE TABLE subscriptions (
  tenant_id                text PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
  plan_tier                text NOT NULL DEFAULT 'sandbox'
                           CHECK (plan_tier IN ('sandbox', 'pro', 'team', 'enterprise')),
  status                   text NOT NULL DEFAULT 'active',
  billing_interval         text NOT NULL DEFAULT 'month' CHECK (billing_interval IN ('month', 'year')),
  customer_id              text,
  subscription_id          text,
  current_period_end       timestamptz,
  past_due_since           timestamptz,
  overage_enabled          boolean NOT NULL DEFAULT false,
  overage_budget_cap_cents integer CHECK (overage_budget_cap_cents >= 0),
  updated_at               timestamptz NOT NULL DEFAULT now()
);

-- Payment events are applied once per processor event id.
CREATE TABLE processed_payment_events (
  event_id     text PRIMARY KEY,
  type         text NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT now()
);
