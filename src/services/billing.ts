import {
  dunningStage, evalRunRefusal, lowestPlanWith, maxEvalRuns, monthStart, newAccount, periodEnd, PLANS, reportedLimit,
  resetDate, utcDay, type BillingAccount, type PlanFeature,
} from '../core/billing.js';
import { ForbiddenError, OverageCapError, PaymentRequiredError, QuotaExceededError } from '../core/errors.js';
import type { Scope } from '../core/types.js';
import type { Config } from '../config/index.js';
import type { BillingStatusResponse } from '../contracts/billing.js';
import type { BillingRepository } from '../ports/billing.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/observability.js';
import type { PaymentProcessor } from '../ports/payments.js';
import type { TenantPatternQuota } from '../ports/storage.js';

export interface BillingDeps {
  config: Config;
  clock: Clock;
  logger: Logger;
  repo: BillingRepository;
  /** null when billing is off (no PAYMENT_SECRET_KEY). */
  payments: PaymentProcessor | null;
}

/**
 * Plans, quotas and dunning for the rest of the service (docs/behavior.md "Billing"). Off without
 * PAYMENT_SECRET_KEY: every tenant is on sandbox, usage is still counted (status reports it) and
 * no guard refuses anything. Each enforcement point calls exactly one guard method.
 */
export class Billing {
  constructor(readonly deps: BillingDeps) {}

  get enabled(): boolean {
    return this.deps.payments !== null;
  }

  /** The tenant's account as billing sees it: sandbox when billing is off or nothing is stored. */
  async account(tenantId: string): Promise<BillingAccount> {
    const fresh = newAccount(tenantId, this.deps.clock.now());
    if (!this.enabled) return fresh;
    return (await this.deps.repo.getAccount(tenantId)) ?? fresh;
  }

  async status(scope: Scope): Promise<BillingStatusResponse> {
    const now = this.deps.clock.now();
    const account = await this.account(scope.tenant_id);
    const plan = PLANS[account.plan_tier];
    const [evalRuns, patterns, projects] = await Promise.all([
      this.deps.repo.evalRuns(scope.tenant_id, monthStart(now)),
      this.deps.repo.countPatterns(scope.tenant_id),
      this.projectsOf(scope),
    ]);
    return {
      plan_tier: account.plan_tier,
      status: account.status,
      billing_interval: account.billing_interval,
      eval_runs_used: evalRuns,
      eval_runs_limit: reportedLimit(plan.eval_runs),
      patterns_used: patterns,
      patterns_limit: reportedLimit(plan.patterns),
      projects_used: projects.size,
      projects_limit: reportedLimit(plan.projects),
      period_end: periodEnd(account, now),
      overage_enabled: account.overage_enabled,
      overage_budget_cap_cents: account.overage_budget_cap_cents,
      billing_enabled: this.enabled,
      reset_date: resetDate(now),
    };
  }

  /** The tenant's pattern quota, or null when nothing limits it (billing off, or a plan without a limit). */
  async patternQuota(tenantId: string): Promise<TenantPatternQuota | null> {
    if (!this.enabled) return null;
    const limit = PLANS[(await this.account(tenantId)).plan_tier].patterns;
    return limit === null ? null : { limit, reset_date: resetDate(this.deps.clock.now()) };
  }

  /**
   * Learn (adding 1) and import (adding its new records): 429 when the tenant would pass its
   * pattern quota. This early check is a fast refusal only: learns in other projects of the
   * tenant run under other scope locks, so the quota it returns goes with the writes, which
   * the storage checks again atomically with the insert (TenantPatternQuota).
   */
  async checkPatterns(scope: Scope, adding: number): Promise<TenantPatternQuota | null> {
    const quota = await this.patternQuota(scope.tenant_id);
    if (quota === null || adding <= 0) return quota;
    const current = await this.deps.repo.countPatterns(scope.tenant_id);
    if (current + adding > quota.limit) throw new QuotaExceededError('patterns', current, quota.limit, quota.reset_date);
    return quota;
  }

  /**
   * Counts one eval run of the current UTC month, atomically within the plan's limit (quota, or
   * quota plus what the overage cap allows). Returns how to take the run back when the evaluate
   * fails. Billing off: counted without a limit.
   */
  async reserveEvalRun(scope: Scope): Promise<() => Promise<void>> {
    const now = this.deps.clock.now();
    const month = monthStart(now);
    const account = await this.account(scope.tenant_id);
    const max = this.enabled ? maxEvalRuns(account) : null;
    const counted = await this.deps.repo.incrementEvalRuns(scope.tenant_id, month, max);
    if (counted === null) throw await this.evalRunRefused(account, now);
    return () => this.deps.repo.decrementEvalRuns(scope.tenant_id, month);
  }

  /** Before queueing an async job: the plan must have async jobs; an evaluate must have a run left. */
  async beforeJob(scope: Scope, operation: string): Promise<void> {
    if (!this.enabled) return;
    await this.requireFeature(scope.tenant_id, 'async_jobs');
    if (operation !== 'evaluate') return;
    const now = this.deps.clock.now();
    const account = await this.account(scope.tenant_id);
    const max = maxEvalRuns(account);
    if (max !== null && (await this.deps.repo.evalRuns(scope.tenant_id, monthStart(now))) >= max) {
      throw await this.evalRunRefused(account, now);
    }
  }

  /** Key creation for a project the tenant does not have yet: 429 at the plan's project quota. */
  async checkNewProject(scope: Scope, projectId: string): Promise<void> {
    if (!this.enabled) return;
    const projects = await this.projectsOf(scope);
    if (projects.has(projectId)) return;
    const limit = PLANS[(await this.account(scope.tenant_id)).plan_tier].projects;
    if (limit !== null && projects.size >= limit) {
      throw new QuotaExceededError('projects', projects.size, limit, resetDate(this.deps.clock.now()));
    }
  }

  /** 403 naming the lowest plan that has the feature. */
  async requireFeature(tenantId: string, feature: PlanFeature): Promise<void> {
    if (!this.enabled) return;
    const tier = (await this.account(tenantId)).plan_tier;
    if (PLANS[tier].features.includes(feature)) return;
    const needed = lowestPlanWith(feature);
    const what = { async_jobs: 'async jobs', governance_export: 'the governance export', oidc: 'OIDC single sign-on' }[feature];
    throw new ForbiddenError(`${what} needs the ${needed} plan or higher; this tenant is on the ${tier} plan`);
  }

  /**
   * Every authenticated request outside billing and health: 402 after the 7-day grace period,
   * a `dunning_event` warning once a day from day 5, and OIDC only on enterprise.
   */
  async checkAccess(tenantId: string, principalKind: string): Promise<void> {
    if (!this.enabled) return;
    const account = await this.account(tenantId);
    if (principalKind === 'oidc') await this.requireFeature(tenantId, 'oidc');
    const stage = dunningStage(account, this.deps.clock.now());
    if (stage.stage === 'ok' || stage.stage === 'grace') return;
    await this.logDunning(account);
    if (stage.stage === 'blocked') {
      throw new PaymentRequiredError(
        `payment is past due since ${account.past_due_since} and the 7-day grace period is over: update the payment method (GET /v1/billing/portal)`,
      );
    }
  }

  /**
   * Logs today's `dunning_event` of every past-due tenant from day 5, whether or not it sends
   * requests (src/app.ts runs it hourly; logDunning keeps it to once a day per tenant).
   */
  async sweepDunning(): Promise<void> {
    if (!this.enabled) return;
    for (const account of await this.deps.repo.pastDue()) await this.logDunning(account);
  }

  /** A `dunning_event` warning for a past-due tenant from day 5, at most once per UTC day across processes. */
  async logDunning(account: BillingAccount): Promise<void> {
    const now = this.deps.clock.now();
    const stage = dunningStage(account, now);
    const today = utcDay(now);
    if (stage.stage === 'ok' || stage.stage === 'grace' || account.dunning_logged_on === today) return;
    const { changed } = await this.deps.repo.updateAccount(
      account.tenant_id,
      () => newAccount(account.tenant_id, now),
      (a) => (a.dunning_logged_on === today || a.status !== 'past_due' ? null : { ...a, dunning_logged_on: today }),
    );
    if (!changed) return;
    this.deps.logger.warn(
      { dunning_event: { tenant_id: account.tenant_id, day: stage.day, past_due_since: account.past_due_since, blocked: stage.stage === 'blocked' } },
      stage.stage === 'blocked' ? 'payment past due beyond the grace period: API answers 402' : `payment past due: day ${stage.day} of the 7-day grace period`,
    );
  }

  private async evalRunRefused(account: BillingAccount, now: Date): Promise<Error> {
    const current = await this.deps.repo.evalRuns(account.tenant_id, monthStart(now));
    if (evalRunRefusal(account) === 'overage_budget_cap_reached') {
      return new OverageCapError(
        `the overage budget cap of ${account.overage_budget_cap_cents} cents is reached (${current} eval runs this month); raise the cap or wait until ${resetDate(now)}`,
      );
    }
    return new QuotaExceededError('eval_runs', current, PLANS[account.plan_tier].eval_runs ?? current, resetDate(now));
  }

  /** The tenant's projects, counting the caller's own (it exists: a key or header named it). */
  private async projectsOf(scope: Scope): Promise<Set<string>> {
    return new Set([...(await this.deps.repo.projectIds(scope.tenant_id)), scope.project_id]);
  }
}

/** Runs one evaluate as one counted eval run: counted before (so the limit holds), taken back on failure. */
export async function countedEvalRun<T>(billing: Billing | undefined, scope: Scope, run: () => Promise<T>): Promise<T> {
  if (!billing) return run();
  const release = await billing.reserveEvalRun(scope);
  try {
    return await run();
  } catch (err) {
    await release().catch(() => undefined);
    throw err;
  }
}
