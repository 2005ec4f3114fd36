-- 0006 billing: the subscription table of 0001 serves every storage setup (also PostgreSQL
-- storage without DB auth, where no tenants row exists), learns event ordering and the daily
-- dunning log, and usage counters remember how many overage blocks were invoiced.
ALTER TABLE subscriptions DROP CONSTRAINT IF EXISTS subscriptions_tenant_id_fkey;
ALTER TABLE subscriptions
  ADD COLUMN last_event_at     timestamptz,
  ADD COLUMN dunning_logged_on date;
ALTER TABLE subscriptions
  ADD CONSTRAINT subscriptions_status_check CHECK (status IN ('active', 'past_due', 'canceled'));
CREATE UNIQUE INDEX subscriptions_customer_idx ON subscriptions (customer_id) WHERE customer_id IS NOT NULL;

ALTER TABLE usage_counters DROP CONSTRAINT IF EXISTS usage_counters_metric_check;
ALTER TABLE usage_counters
  ADD CONSTRAINT usage_counters_metric_check
  CHECK (metric IN ('eval_runs', 'overage_runs', 'overage_cents', 'overage_blocks_billed'));
ALTER TABLE usage_counters ADD CONSTRAINT usage_counters_value_check CHECK (value >= 0);
