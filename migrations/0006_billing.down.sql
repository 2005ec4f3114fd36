-- Reverts 0006: rows of the new metric go, the subscription table gets back its 0001 shape
-- (subscriptions of tenants without a tenants row cannot keep the foreign key, so they go).
ALTER TABLE usage_counters DROP CONSTRAINT IF EXISTS usage_counters_value_check;
DELETE FROM usage_counters WHERE metric = 'overage_blocks_billed';
ALTER TABLE usage_counters DROP CONSTRAINT IF EXISTS usage_counters_metric_check;
ALTER TABLE usage_counters
  ADD CONSTRAINT usage_counters_metric_check CHECK (metric IN ('eval_runs', 'overage_runs', 'overage_cents'));

DROP INDEX IF EXISTS subscriptions_customer_idx;
ALTER TABLE subscriptions DROP CONSTRAINT IF EXISTS subscriptions_status_check;
ALTER TABLE subscriptions DROP COLUMN IF EXISTS dunning_logged_on, DROP COLUMN IF EXISTS last_event_at;
DELETE FROM subscriptions s WHERE NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = s.tenant_id);
ALTER TABLE subscriptions
  ADD CONSTRAINT subscriptions_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants (id) ON DELETE CASCADE;
