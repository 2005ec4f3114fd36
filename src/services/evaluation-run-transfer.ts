import type { EvaluationRunLine } from '../contracts/memory.js';
import { EvaluationRun, RunCase } from '../contracts/evaluations.js';
import type { Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';

/** Runs read per storage call while exporting (keyset pages, so memory stays flat). */
const EXPORT_PAGE = 100;

/**
 * Evaluation runs in the NDJSON export and import (docs/behavior.md "Evaluation runs"): one line
 * per run with its cases in their recorded order, newest run first.
 */
export async function* evaluationRunLines(deps: ServiceDeps, scope: Scope): AsyncGenerator<EvaluationRunLine> {
  const repo = deps.storage.evaluationRuns;
  let before: string | undefined;
  for (;;) {
    const page = await repo.listRuns(scope, { limit: EXPORT_PAGE, ...(before === undefined ? {} : { before }) });
    for (const run of page) {
      const cases = (await repo.listCases(scope, run.id)).map((c) => inContractOrder(RunCase, c));
      yield { type: 'evaluation_run', tenant_id: scope.tenant_id, project_id: scope.project_id, run: inContractOrder(EvaluationRun, run), cases };
    }
    if (page.length < EXPORT_PAGE) return;
    before = page[page.length - 1].id;
  }
}

/**
 * The value with its fields in the contract's order, as an import reads it back: a project
 * exported again after the import gives the same lines, byte for byte, whatever order the
 * storage kept the fields in. A value outside the contract goes out as it is.
 */
function inContractOrder<T>(schema: { safeParse(v: unknown): { success: boolean; data?: unknown } }, value: T): T {
  const parsed = schema.safeParse(value);
  return parsed.success ? (parsed.data as T) : value;
}

/**
 * Restores exported runs under their own ids with their cases. A run id the scope already holds
 * is skipped (never replaced). A blessed run whose label already has another baseline in the
 * scope comes in unblessed: a label keeps one baseline, and the one already there stays.
 */
export async function restoreEvaluationRunLines(
  deps: ServiceDeps,
  scope: Scope,
  lines: EvaluationRunLine[],
): Promise<{ imported: number; skipped: number }> {
  const repo = deps.storage.evaluationRuns;
  let imported = 0;
  let skipped = 0;
  for (const line of lines) {
    const run = line.run as EvaluationRun;
    if (await repo.getRun(scope, run.id)) {
      skipped++;
      continue;
    }
    const stored = run.blessed && run.label !== null && (await hasOtherBaseline(deps, scope, run)) ? { ...run, blessed: false } : run;
    await repo.putRuns(scope, [stored]);
    for (const c of line.cases as RunCase[]) await repo.putCase(scope, run.id, c);
    imported++;
  }
  return { imported, skipped };
}

async function hasOtherBaseline(deps: ServiceDeps, scope: Scope, run: EvaluationRun): Promise<boolean> {
  const blessed = await deps.storage.evaluationRuns.listRuns(scope, { label: run.label ?? undefined, blessed: true, limit: 1 });
  return blessed.some((r) => r.id !== run.id);
}
