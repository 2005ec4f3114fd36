import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { targetCovers, type DeletionCounts, type DeletionTarget } from '../../../core/governance.js';
import type { DeletionOptions, GovernanceRepository } from '../../../ports/storage.js';
import type { AuditLog } from './audit-log.js';
import { atomicWriteFile, ensureDirDurable, fsyncDir, removeStaleTemps } from './durable/fs-durable.js';
import { assertScope, isScopeIdName, PROJECTS_DIR, TENANTS_DIR } from './ids.js';
import type { JsonJobQueue } from './jobs-repo.js';
import type { ScopeRegistry } from './scope-registry.js';
import type { JsonSettingsStore } from './settings-repos.js';

/**
 * Crash-safe governance deletion of JSON storage. A deletion first writes an intent file
 * (deletions/<id>.json, atomically and fsynced); from then on it is decided. It then blocks the
 * target's scopes, renames their folder into deletions/<id>.trash (one atomic rename), removes
 * the target's jobs, scrubs its audit events, removes the trash and finally the intent.
 * Every step is idempotent, and `replay()` at open redoes the steps of any intent left by a
 * crash, so after a restart the target is whole (no intent was written) or gone, never half.
 */
export const DELETIONS_DIR = 'deletions';

interface DeletionIntent {
  version: 1;
  id: string;
  tenant_id: string;
  project_id: string | null;
  at: string;
  keep_running_operations: string[];
}

/** Test seam: called after each named step (a SIGKILL test stops the process there). */
export type DeletionStepHook = (step: 'intent' | 'detached' | 'renamed' | 'jobs' | 'audit' | 'trash') => void | Promise<void>;

interface Parts {
  dataPath: string;
  registry: ScopeRegistry;
  settings: JsonSettingsStore;
  jobs: JsonJobQueue;
  audit: AuditLog;
  onStep?: DeletionStepHook;
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

async function subdirNames(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory() && isScopeIdName(e.name)).map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

function assertTarget(target: DeletionTarget): void {
  assertScope({ tenant_id: target.tenant_id, project_id: target.project_id ?? 'all' });
}

export class JsonScopeDeleter implements GovernanceRepository {
  private readonly dir: string;
  /** Deletions run one at a time: each one's steps assume nobody else moves the same folders. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly parts: Parts) {
    this.dir = path.join(parts.dataPath, DELETIONS_DIR);
  }

  /** The folder holding everything of the target: the project's, or the tenant's. */
  private folderOf(target: DeletionTarget): string {
    const tenant = path.join(this.parts.dataPath, TENANTS_DIR, target.tenant_id);
    return target.project_id === null ? tenant : path.join(tenant, PROJECTS_DIR, target.project_id);
  }

  /** Project folders on disk and loaded scopes of the target (a scope may exist only in memory). */
  private async projectsOf(target: DeletionTarget): Promise<Set<string>> {
    const found = new Set(this.parts.registry.scopesOf(target).map((e) => e.scope.project_id));
    const projectsDir = path.join(this.parts.dataPath, TENANTS_DIR, target.tenant_id, PROJECTS_DIR);
    for (const name of await subdirNames(projectsDir)) if (target.project_id === null || name === target.project_id) found.add(name);
    return found;
  }

  async countScope(target: DeletionTarget, opts: DeletionOptions): Promise<DeletionCounts> {
    assertTarget(target);
    const patterns = this.parts.registry.scopesOf(target).reduce((n, e) => n + e.store.state.patterns.size, 0);
    return {
      patterns_deleted: patterns,
      jobs_deleted: this.parts.jobs.countTarget(target, opts.keepRunningOperations),
      projects_deleted: (await this.projectsOf(target)).size,
      keys_revoked: 0,
    };
  }

  deleteScope(target: DeletionTarget, opts: DeletionOptions): Promise<DeletionCounts> {
    assertTarget(target);
    const run = this.chain.catch(() => undefined).then(async () => {
      const counts = await this.countScope(target, opts);
      const intent: DeletionIntent = {
        version: 1,
        id: `${Date.parse(opts.at) || 0}-${randomBytes(4).toString('hex')}`,
        tenant_id: target.tenant_id,
        project_id: target.project_id,
        at: opts.at,
        keep_running_operations: opts.keepRunningOperations,
      };
      await ensureDirDurable(this.dir);
      await atomicWriteFile(this.intentFile(intent.id), [`${JSON.stringify(intent)}\n`]);
      await this.parts.onStep?.('intent');
      const jobsDeleted = await this.carryOut(intent);
      return { ...counts, jobs_deleted: jobsDeleted };
    });
    this.chain = run;
    return run;
  }

  /** Finishes every deletion a crash interrupted (called at open, before serving). */
  async replay(): Promise<number> {
    // An intent whose atomic write a crash interrupted was never decided: its temp file goes.
    await removeStaleTemps(this.dir);
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((n) => n.endsWith('.json')).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    for (const name of names) {
      const intent = JSON.parse(await readFile(path.join(this.dir, name), 'utf8')) as DeletionIntent;
      await this.carryOut(intent);
    }
    // Trash of a deletion whose intent was already removed (crash after the last step).
    for (const name of await readdir(this.dir)) if (name.endsWith('.trash')) await rm(path.join(this.dir, name), { recursive: true, force: true });
    return names.length;
  }

  private intentFile(id: string): string {
    return path.join(this.dir, `${id}.json`);
  }

  /** The idempotent steps after the intent; returns how many jobs this run removed. */
  private async carryOut(intent: DeletionIntent): Promise<number> {
    const target: DeletionTarget = { tenant_id: intent.tenant_id, project_id: intent.project_id };
    const { registry, settings, jobs, audit, onStep } = this.parts;
    const release = registry.block(target);
    try {
      await registry.detach(target);
      await onStep?.('detached');
      const folder = this.folderOf(target);
      const trash = path.join(this.dir, `${intent.id}.trash`);
      if (await exists(folder)) {
        await rename(folder, trash);
        await fsyncDir(path.dirname(folder));
        await fsyncDir(this.dir);
      }
      await settings.forget(folder);
      await onStep?.('renamed');
      const jobsDeleted = await jobs.deleteTarget(target, intent.keep_running_operations);
      await onStep?.('jobs');
      await audit.scrub((e) => targetCovers(target, e));
      await onStep?.('audit');
      await rm(trash, { recursive: true, force: true });
      await onStep?.('trash');
      await rm(this.intentFile(intent.id), { force: true });
      await fsyncDir(this.dir);
      return jobsDeleted;
    } finally {
      release();
    }
  }
}
