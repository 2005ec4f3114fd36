-- Reverts 0001 init. The vector extension stays: it is database-wide and may serve others;
-- `CREATE EXTENSION IF NOT EXISTS` in the up file makes re-applying safe.
DROP TABLE IF EXISTS processed_payment_events;
DROP TABLE IF EXISTS subscriptions;
DROP TABLE IF EXISTS usage_counters;
DROP TABLE IF EXISTS jobs;
DROP TABLE IF EXISTS api_keys;
DROP TABLE IF EXISTS meta;
DROP TABLE IF EXISTS audit_log;
DROP TABLE IF EXISTS analytics_rollups;
DROP TABLE IF EXISTS roi_events;
DROP TABLE IF EXISTS metrics_counters;
DROP TABLE IF EXISTS pattern_skills;
DROP TABLE IF EXISTS feedback_clusters;
DROP TABLE IF EXISTS eval_observations;
DROP TABLE IF EXISTS patterns;
DROP TABLE IF EXISTS projects;
DROP TABLE IF EXISTS tenants;
