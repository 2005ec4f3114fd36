import { describe, expect, it } from 'vitest';
import {
  DAY_MS, DEFAULT_RETENTION_DAYS, effectivePolicy, expiryOf, isExpired, isValidRetentionDays,
} from '../../src/core/retention.js';

const UPDATED = '2024-01-01T00:00:00.000Z';
const at = (iso: string) => new Date(iso);

describe('effectivePolicy', () => {
  it('prefers the project, then the tenant, then 365 days', () => {
    expect(effectivePolicy({ project_days: 30, tenant_days: 90 })).toEqual({ retention_days: 30, source: 'project' });
    expect(effectivePolicy({ project_days: null, tenant_days: 90 })).toEqual({ retention_days: 90, source: 'tenant' });
    expect(effectivePolicy({ project_days: null, tenant_days: null })).toEqual({ retention_days: DEFAULT_RETENTION_DAYS, source: 'default' });
    expect(DEFAULT_RETENTION_DAYS).toBe(365);
  });

  it('ignores stored values outside 1–36500 or not whole', () => {
    expect(effectivePolicy({ project_days: 0, tenant_days: 40000 }).source).toBe('default');
    expect(effectivePolicy({ project_days: 1.5, tenant_days: 7 })).toEqual({ retention_days: 7, source: 'tenant' });
    expect([1, 36500].every(isValidRetentionDays)).toBe(true);
    expect([0, 36501, 2.5, Number.NaN, '10', null].some(isValidRetentionDays)).toBe(false);
  });
});

describe('expiry', () => {
  const policy = { retention_days: 10, source: 'project' as const };

  it('counts retention days from updated_at', () => {
    const p = { expires_at: null, updated_at: UPDATED };
    expect(expiryOf(p, policy)).toEqual({ at: Date.parse(UPDATED) + 10 * DAY_MS, source: 'project' });
    expect(isExpired(p, policy, at('2024-01-10T23:59:59.999Z'))).toBe(false);
    expect(isExpired(p, policy, at('2024-01-11T00:00:00.000Z'))).toBe(true);
  });

  it("lets the pattern's own expires_at win in both directions", () => {
    const later = { expires_at: '2030-01-01T00:00:00Z', updated_at: UPDATED };
    expect(isExpired(later, policy, at('2029-12-31T00:00:00Z'))).toBe(false);
    expect(expiryOf(later, policy).source).toBe('pattern');
    const sooner = { expires_at: '2024-01-02T00:00:00Z', updated_at: UPDATED };
    expect(isExpired(sooner, policy, at('2024-01-02T00:00:00Z'))).toBe(true);
  });

  it('falls back to the policy when expires_at is not a time', () => {
    const p = { expires_at: 'not a date', updated_at: UPDATED };
    expect(expiryOf(p, policy).source).toBe('project');
    expect(isExpired(p, policy, at('2024-01-05T00:00:00Z'))).toBe(false);
  });
});
