import { describe, expect, it } from 'vitest';
import { isReadOnlyStatement } from '../../src/adapters/storage/postgres/db.js';

/**
 * Which statements are retried once when their connection is lost mid-way (issue 25, 1):
 * only plain reads. A write's outcome is unknown after a lost connection, so it is answered
 * 503 instead of being sent twice.
 */
describe('isReadOnlyStatement', () => {
  it('plain SELECTs are reads', () => {
    expect(isReadOnlyStatement('SELECT 1')).toBe(true);
    expect(isReadOnlyStatement('  select id, task FROM patterns WHERE tenant_id = $1')).toBe(true);
  });

  it('writes, CTEs, row locks and functions with effects are not', () => {
    for (const sql of [
      'INSERT INTO jobs (id) VALUES ($1)',
      'UPDATE patterns SET reuse_count = reuse_count + 1',
      'DELETE FROM jobs WHERE id = $1',
      "WITH added AS (INSERT INTO jobs (id) VALUES ($1) RETURNING id) SELECT * FROM added",
      'SELECT id FROM jobs FOR UPDATE SKIP LOCKED',
      'SELECT id FROM patterns FOR NO KEY UPDATE',
      "SELECT pg_notify('service_jobs', '')",
      'SELECT pg_advisory_xact_lock(1, 2)',
      "SELECT nextval('s')",
      'BEGIN',
    ]) {
      expect(isReadOnlyStatement(sql), sql).toBe(false);
    }
  });
});
