import { TENANT_PATTERN_COUNT_SQL } from './tenant-quota.js';
import type { BillingAccount } from '../../../core/billing.js';
import type { BillingRepository } from '../../../ports/billing.js';
import type { Db, Queryer } from './db.js';

interface AccountRow {
  tenant_id: string;
  plan_tier: BillingAccount['plan_tier'];
  status: BillingAccount['status'];
  billing_interval: BillingAccount['billing_interval'];
  customer_id: string | null;
  subscription_id: string | null;
  current_period_end: Date | null;
  past_due_since: Date | null;
  last_event_at: Date | null;
  dunning_logged_on: string | null;
  overage_enabled: boolean;
  overage_budget_cap_cents: number | null;
  updated_at: Date;
}

const COLUMNS = `tenant_id, plan_tier, status, billing_interval, customer_id, subscription_id, current_period_end,
  past_due_since, last_event_at, to_char(dunning_logged_on, 'YYYY-MM-DD') AS dunning_logged_on, overage_enabled,
  overage_budget_cap_cents, updated_at`;

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

function toAccount(r: AccountRow): BillingAccount {
  return {
    tenant_id: r.tenant_id, plan_tier: r.plan_tier, status: r.status, billing_interval: r.billing_interval,
    customer_id: r.customer_id, subscription_id: r.subscription_id, period_end: iso(r.current_period_end),
    past_due_since: iso(r.past_due_since), last_event_at: iso(r.last_event_at), dunning_logged_on: r.dunning_logged_on,
    overage_enabled: r.overage_enabled, overage_budget_cap_cents: r.overage_budget_cap_cents, updated_at: r.updated_at.toISOString(),
  };
}

async function writeAccount(q: Queryer, a: BillingAccount): Promise<void> {
  await q.query(
    `INSERT INTO subscriptions (tenant_id, plan_tier, status, billing_interval, customer_id, subscription_id, current_period_end,
       past_due_since, last_event_at, dunning_logged_on, overage_enabled, overage_budget_cap_cents, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (tenant_id) DO UPDATE SET plan_tier = $2, status = $3, billing_interval = $4, customer_id = $5,
       subscription_id = $6, current_period_end = $7, past_due_since = $8, last_event_at = $9, dunning_logged_on = $10,
       overage_enabled = $11, overage_budget_cap_cents = $12, updated_at = $13`,
    [a.tenant_id, a.plan_tier, a.status, a.billing_interval, a.customer_id, a.subscription_id, a.period_end,
      a.past_due_since, a.last_event_at, a.dunning_logged_on, a.overage_enabled, a.overage_budget_cap_cents, a.updated_at],
  );
}

/**
 * Billing in PostgreSQL (tables of 0001 as changed by 0006). Counter changes are single
 * statements whose limit check sits in the same statement as the write: concurrent upserts of
 * one row serialise on its row lock and re-check the condition against the newest value, so
 * processes sharing the database never pass a limit or lose an increment.
 */
export function createBillingRepository(db: Db): BillingRepository {
  return {
    async getAccount(tenantId) {
      const res = await db.query<AccountRow>(`SELECT ${COLUMNS} FROM subscriptions WHERE tenant_id = $1`, [tenantId], 'billing.getAccount');
      return res.rows.length ? toAccount(res.rows[0]) : null;
    },
    async pastDue() {
      const res = await db.query<AccountRow>(`SELECT ${COLUMNS} FROM subscriptions WHERE status = 'past_due'`, [], 'billing.pastDue');
      return res.rows.map(toAccount);
    },
    async findByCustomer(customerId) {
      const res = await db.query<AccountRow>(`SELECT ${COLUMNS} FROM subscriptions WHERE customer_id = $1`, [customerId], 'billing.findByCustomer');
      return res.rows.length ? toAccount(res.rows[0]) : null;
    },
    updateAccount(tenantId, fresh, change) {
      return db.tx('billing.updateAccount', async (q) => {
        // Make sure a row exists to lock, then hold its lock until COMMIT.
        const initial = fresh();
        await q.query(
          `INSERT INTO subscriptions (tenant_id, updated_at) VALUES ($1, $2) ON CONFLICT (tenant_id) DO NOTHING`,
          [tenantId, initial.updated_at],
        );
        const res = await q.query<AccountRow>(`SELECT ${COLUMNS} FROM subscriptions WHERE tenant_id = $1 FOR UPDATE`, [tenantId]);
        const current = toAccount(res.rows[0]);
        const next = change(current);
        if (next === null) return { account: current, changed: false };
        await writeAccount(q, next);
        return { account: next, changed: true };
      });
    },
    async incrementEvalRuns(tenantId, month, max) {
      const res = await db.query<{ value: string }>(
        `INSERT INTO usage_counters AS u (tenant_id, period_start, metric, value)
         SELECT $1, $2::date, 'eval_runs', 1 WHERE $3::bigint IS NULL OR $3::bigint >= 1
         ON CONFLICT (tenant_id, period_start, metric) DO UPDATE SET value = u.value + 1
           WHERE $3::bigint IS NULL OR u.value + 1 <= $3::bigint
         RETURNING value`,
        [tenantId, month, max],
        'billing.incrementEvalRuns',
      );
      return res.rows.length ? Number(res.rows[0].value) : null;
    },
    async decrementEvalRuns(tenantId, month) {
      await db.query(
        `UPDATE usage_counters SET value = value - 1
         WHERE tenant_id = $1 AND period_start = $2::date AND metric = 'eval_runs' AND value > 0`,
        [tenantId, month],
        'billing.decrementEvalRuns',
      );
    },
    async evalRuns(tenantId, month) {
      const res = await db.query<{ value: string }>(
        `SELECT value FROM usage_counters WHERE tenant_id = $1 AND period_start = $2::date AND metric = 'eval_runs'`,
        [tenantId, month],
        'billing.evalRuns',
      );
      return res.rows.length ? Number(res.rows[0].value) : 0;
    },
    async usageMonths(tenantId) {
      const res = await db.query<{ month: string; eval_runs: string; billed_blocks: string }>(
        `SELECT to_char(period_start, 'YYYY-MM-DD') AS month,
           coalesce(sum(value) FILTER (WHERE metric = 'eval_runs'), 0) AS eval_runs,
           coalesce(sum(value) FILTER (WHERE metric = 'overage_blocks_billed'), 0) AS billed_blocks
         FROM usage_counters WHERE tenant_id = $1 AND metric IN ('eval_runs', 'overage_blocks_billed')
         GROUP BY period_start ORDER BY period_start`,
        [tenantId],
        'billing.usageMonths',
      );
      return res.rows.map((r) => ({ month: r.month, eval_runs: Number(r.eval_runs), billed_blocks: Number(r.billed_blocks) }));
    },
    async setBilledBlocks(tenantId, month, from, to) {
      const res = await db.query(
        `INSERT INTO usage_counters AS u (tenant_id, period_start, metric, value)
         SELECT $1, $2::date, 'overage_blocks_billed', $4 WHERE $3 = 0
         ON CONFLICT (tenant_id, period_start, metric) DO UPDATE SET value = $4 WHERE u.value = $3
         RETURNING value`,
        [tenantId, month, from, to],
        'billing.setBilledBlocks',
      );
      return (res.rowCount ?? 0) > 0;
    },
    async claimEvent(eventId, type) {
      const res = await db.query(
        'INSERT INTO processed_payment_events (event_id, type) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING',
        [eventId, type],
        'billing.claimEvent',
      );
      return (res.rowCount ?? 0) > 0;
    },
    async releaseEvent(eventId) {
      await db.query('DELETE FROM processed_payment_events WHERE event_id = $1', [eventId], 'billing.releaseEvent');
    },
    async countPatterns(tenantId) {
      const res = await db.query<{ n: string }>(TENANT_PATTERN_COUNT_SQL, [tenantId], 'billing.countPatterns');
      return Number(res.rows[0].n);
    },
    async projectIds(tenantId) {
      const res = await db.query<{ id: string }>(
        `SELECT id FROM projects WHERE tenant_id = $1
         UNION SELECT project_id FROM pattern_counts WHERE tenant_id = $1 AND n > 0`,
        [tenantId],
        'billing.projectIds',
      );
      return res.rows.map((r) => r.id);
    },
  };
}
