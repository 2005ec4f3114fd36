import type { BillingAccount } from '../core/billing.js';

/** One month's eval-run counter and how many of its overage blocks were invoiced already. */
export interface UsageMonth {
  /** `YYYY-MM-01` (UTC). */
  month: string;
  eval_runs: number;
  billed_blocks: number;
}

/**
 * Billing state per tenant (both storages; PostgreSQL rows from migration 0006). Counters are
 * keyed by tenant and UTC month and change atomically, so several server processes on one
 * database never lose an increment or pass a limit.
 */
export interface BillingRepository {
  /** The stored account, or null for a tenant that never had one (a sandbox tenant). */
  getAccount(tenantId: string): Promise<BillingAccount | null>;
  /** Every account whose status is past_due (the daily dunning sweep). */
  pastDue(): Promise<BillingAccount[]>;
  /** The account holding this processor customer id, or null. */
  findByCustomer(customerId: string): Promise<BillingAccount | null>;
  /**
   * Read-modify-write of one account under a per-tenant lock (a row lock in PostgreSQL):
   * `change` gets the current account (a fresh one when none is stored) and returns the next
   * one, or null to leave it unchanged. Returns the resulting account and whether it changed.
   */
  updateAccount(
    tenantId: string,
    fresh: () => BillingAccount,
    change: (current: BillingAccount) => BillingAccount | null,
  ): Promise<{ account: BillingAccount; changed: boolean }>;
  /**
   * Adds one eval run to the month's counter only while the result stays within `max` (null:
   * no limit), in one atomic step. Returns the new count, or null when refused.
   */
  incrementEvalRuns(tenantId: string, month: string, max: number | null): Promise<number | null>;
  /** Takes back one counted run (its evaluate failed); never below zero. */
  decrementEvalRuns(tenantId: string, month: string): Promise<void>;
  /** The month's eval-run count (0 when none). */
  evalRuns(tenantId: string, month: string): Promise<number>;
  /** Every month of the tenant with a counter, oldest first. */
  usageMonths(tenantId: string): Promise<UsageMonth[]>;
  /**
   * Compare-and-set of a month's invoiced overage blocks from `from` to `to`: true for exactly
   * one caller, so each block is invoiced once even when two processes handle invoice events.
   */
  setBilledBlocks(tenantId: string, month: string, from: number, to: number): Promise<boolean>;
  /** Records a processor event id; false when it was recorded before (a replay). */
  claimEvent(eventId: string, type: string): Promise<boolean>;
  /** Forgets an event id whose processing failed, so the processor's retry is processed. */
  releaseEvent(eventId: string): Promise<void>;
  /** Stored patterns across all projects of the tenant. */
  countPatterns(tenantId: string): Promise<number>;
  /** Ids of the tenant's projects (with keys or settings or patterns). */
  projectIds(tenantId: string): Promise<string[]>;
}
