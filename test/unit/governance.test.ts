import { describe, expect, it } from 'vitest';
import {
  deletionRefusal, deletionResult, parseClassificationList, projectTarget, targetCovers, tenantTarget,
} from '../../src/core/governance.js';
import { CLASSIFICATIONS } from '../../src/core/types.js';

describe('governance rules (pure)', () => {
  it('parses a classification list, de-duplicated, naming unknown entries', () => {
    expect(parseClassificationList('public, internal,public', CLASSIFICATIONS)).toEqual({ classifications: ['public', 'internal'], unknown: [] });
    expect(parseClassificationList('public,secret,', CLASSIFICATIONS)).toEqual({ classifications: ['public'], unknown: ['secret'] });
    expect(parseClassificationList('', CLASSIFICATIONS)).toEqual({ classifications: [], unknown: [] });
  });

  it('a target covers its project, or every project of its tenant, never another tenant', () => {
    expect(targetCovers(projectTarget('a', 'p'), { tenant_id: 'a', project_id: 'p' })).toBe(true);
    expect(targetCovers(projectTarget('a', 'p'), { tenant_id: 'a', project_id: 'q' })).toBe(false);
    expect(targetCovers(tenantTarget('a'), { tenant_id: 'a', project_id: 'q' })).toBe(true);
    expect(targetCovers(tenantTarget('a'), { tenant_id: 'a', project_id: null })).toBe(true);
    expect(targetCovers(tenantTarget('a'), { tenant_id: 'b', project_id: 'q' })).toBe(false);
  });

  it('refuses other tenants, other projects to non-owners of a bound key, and tenants to non-owners', () => {
    const admin = { tenant_id: 'a', project_id: 'p', role: 'admin' as const };
    const owner = { ...admin, role: 'owner' as const };
    const envAdmin = { tenant_id: 'a', project_id: null, role: 'admin' as const };
    expect(deletionRefusal(admin, projectTarget('a', 'p'))).toBeNull();
    expect(deletionRefusal(admin, projectTarget('a', 'q'))).toContain('bound to project p');
    expect(deletionRefusal(owner, projectTarget('a', 'q'))).toBeNull();
    expect(deletionRefusal(envAdmin, projectTarget('a', 'q'))).toBeNull();
    expect(deletionRefusal(owner, projectTarget('b', 'p'))).toContain('own tenant');
    expect(deletionRefusal(admin, tenantTarget('a'))).toContain('owner');
    expect(deletionRefusal(owner, tenantTarget('a'))).toBeNull();
    expect(deletionRefusal(owner, tenantTarget('b'))).toContain('own tenant');
  });

  it('reports a tenant deletion with project "*" and adds keys revoked elsewhere', () => {
    const counts = { patterns_deleted: 3, jobs_deleted: 1, projects_deleted: 2, keys_revoked: 1 };
    expect(deletionResult(tenantTarget('a'), counts, 2)).toEqual({
      tenant_id: 'a', project_id: '*', patterns_deleted: 3, jobs_deleted: 1, keys_revoked: 3, projects_deleted: 2,
    });
  });
});
