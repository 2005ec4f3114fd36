import { scrubAudit } from './governance.js';
import type { AuditEvent, EmbeddingInfo, RoiEvent, Scope } from '../../../core/types.js';
import type { AnalyticsRepository, AuditRepository, MetaRepository } from '../../../ports/storage.js';
import type { Logger } from '../../../ports/observability.js';
import type { Db } from './db.js';
import { iso } from './rows.js';
import { ROI_EVENTS_PER_SCOPE } from '../../../core/roi.js';

/** An append trims its scope when its id is a multiple of this (amortises the trim's scan). */
const TRIM_EVERY = 64;

/** (at, kind, data) of a roi_events row. */
export function roiEventValues(event: RoiEvent): [string, RoiEvent['kind'], string] {
  const { at, kind, ...data } = event;
  return [at, kind, JSON.stringify(data)];
}

/** Whether appending the event of this id trims its scope (about one append in TRIM_EVERY). */
export function trimDue(id: string): boolean {
  return BigInt(id) % BigInt(TRIM_EVERY) === 0n;
}

/**
 * Called with the id of every appended ROI event. The event is stored either way; a failed
 * trim (e.g. a concurrent one) only delays the cleanup, which the next trim of this scope
 * does, and reads never see past the window anyway.
 */
export async function trimAfterAppend(db: Db, logger: Logger, scope: Scope, id: string): Promise<void> {
  if (!trimDue(id)) return;
  await db
    .query(
      `DELETE FROM roi_events WHERE tenant_id = $1 AND project_id = $2 AND id <= (
         SELECT id FROM roi_events WHERE tenant_id = $1 AND project_id = $2
         ORDER BY id DESC OFFSET $3 LIMIT 1)`,
      [scope.tenant_id, scope.project_id, ROI_EVENTS_PER_SCOPE],
      'analytics.trim',
    )
    .catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'trimming ROI events failed; will retry on a later append'));
}

/** One ROI event of a scope, returning its id (the trim after an append needs it). */
export const ROI_EVENT_INSERT_SQL = 'INSERT INTO roi_events (tenant_id, project_id, at, kind, data) VALUES ($1, $2, $3, $4, $5) RETURNING id';

/**
 * "Newest" is append order (the identity id). Reads only ever look at the newest
 * ROI_EVENTS_PER_SCOPE rows of the scope, so the window is exact; the physical trim runs on about
 * one append in TRIM_EVERY, because finding the cut-off means walking 10,000 index entries,
 * too costly on every append, and a per-scope counter would serialise appends on one row.
 */
export function createAnalyticsRepository(db: Db, logger: Logger): AnalyticsRepository {
  return {
    async append(scope, event) {
      // Every read-only recall appends one (docs/behavior.md "Recall" 8): a hot statement, prepared.
      const res = await db.query<{ id: string }>(
        ROI_EVENT_INSERT_SQL,
        [scope.tenant_id, scope.project_id, ...roiEventValues(event)],
        'analytics.append',
        true,
      );
      await trimAfterAppend(db, logger, scope, res.rows[0].id);
    },

    async list(scope, opts) {
      const params: unknown[] = [scope.tenant_id, scope.project_id, ROI_EVENTS_PER_SCOPE];
      let where = '';
      if (opts.since !== undefined) {
        params.push(opts.since);
        where = `WHERE at >= $${params.length}`;
      }
      params.push(Math.max(0, Math.floor(opts.limit)));
      const res = await db.query<{ at: Date; kind: RoiEvent['kind']; data: Omit<RoiEvent, 'at' | 'kind'> }>(
        `SELECT at, kind, data FROM (
           SELECT id, at, kind, data FROM roi_events WHERE tenant_id = $1 AND project_id = $2
           ORDER BY id DESC LIMIT $3
         ) newest ${where}
         ORDER BY at DESC, id DESC LIMIT $${params.length}`,
        params,
        'analytics.list',
      );
      return res.rows.map((r) => ({ ...r.data, at: iso(r.at), kind: r.kind }));
    },
  };
}

interface AuditRow {
  at: Date;
  kind: string;
  tenant_id: string | null;
  project_id: string | null;
  actor: string | null;
  request_id: string | null;
  ip: string | null;
  detail: Record<string, unknown>;
}

export function createAuditRepository(db: Db): AuditRepository {
  return {
    async append(e: AuditEvent) {
      await db.query(
        `INSERT INTO audit_log (at, kind, tenant_id, project_id, actor, request_id, ip, detail)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [e.at, e.kind, e.tenant_id, e.project_id, e.actor, e.request_id, e.ip, JSON.stringify(e.detail ?? {})],
        'audit.append',
      );
    },

    async list(filter) {
      const params: unknown[] = [];
      const parts: string[] = [];
      if (filter.tenant_id !== undefined) {
        params.push(filter.tenant_id);
        parts.push(`tenant_id = $${params.length}`);
      }
      if (filter.kind !== undefined) {
        params.push(filter.kind);
        parts.push(`kind = $${params.length}`);
      }
      params.push(Math.max(0, Math.floor(filter.limit)));
      const where = parts.length ? `WHERE ${parts.join(' AND ')}` : '';
      const res = await db.query<AuditRow>(
        `SELECT at, kind, tenant_id, project_id, actor, request_id, ip, detail FROM audit_log ${where}
         ORDER BY id DESC LIMIT $${params.length}`,
        params,
        'audit.list',
      );
      return res.rows.map((r) => ({ ...r, at: iso(r.at) }));
    },

    async scrub(target) {
      return db.tx('audit.scrub', (q) => scrubAudit(q, target));
    },
  };
}

const EMBEDDING_KEY = 'embedding';

export function createMetaRepository(db: Db): MetaRepository {
  return {
    async getEmbeddingInfo() {
      const res = await db.query<{ value: EmbeddingInfo }>('SELECT value FROM meta WHERE key = $1', [EMBEDDING_KEY], 'meta.get');
      return res.rows[0]?.value ?? null;
    },

    async setEmbeddingInfo(info) {
      await db.query(
        `INSERT INTO meta (key, value, updated_at) VALUES ($1, $2, now())
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
        [EMBEDDING_KEY, JSON.stringify(info)],
        'meta.set',
      );
    },
  };
}
