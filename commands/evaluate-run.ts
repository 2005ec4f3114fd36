import type { ClientEnv } from '../src/config/client.js';
import type {
  CompareResponse, CreateRunRequest, EvaluationRun, FinishRunResponse, RunCase, ServiceClient,
} from '../src/client/index.js';
import { routes } from '../src/contracts/routes.js';
import { defaultCaseId } from '../src/core/evaluation-runs.js';
import { reducerName, type RepeatReducer } from '../src/core/repeats.js';
import { consoleEvaluationHash } from '../src/core/vocabulary.js';
import { ExitCode } from './shared/exit-codes.js';

/**
 * How `service evaluate` groups its cases into one evaluation run (docs/behavior.md
 * "Evaluation runs"): create the run with the gate and the CI context, evaluate every case with
 * the run's id, finish it (comparison with --baseline, --bless-on-pass), then read it back so
 * reports carry what the server recorded (repeats, flaky, cost, cache hits).
 */

export interface RunFlags {
  label?: string;
  baseline?: string;
  blessOnPass?: boolean;
  gitCommit?: string;
  gitBranch?: string;
  ciProvider?: string;
  regressionDelta?: number;
  numEvals?: number;
  minScore?: number;
  failOnAdversarial?: boolean;
  failOnHighVariance?: boolean;
  /** --reducer: how the server merges a case's repeats into its verdict. */
  reducer?: RepeatReducer;
}

/** The body that starts the run: flags first, then what the CI environment says. */
export function createRunBody(flags: RunFlags, env: Pick<ClientEnv, 'ciRun'>): CreateRunRequest {
  const ci = env.ciRun;
  const commit = flags.gitCommit ?? ci?.commit ?? null;
  const branch = flags.gitBranch ?? ci?.branch ?? null;
  const provider = flags.ciProvider ?? ci?.provider ?? undefined;
  return {
    ...(flags.label === undefined ? {} : { label: flags.label }),
    git: { commit, branch },
    ...(provider === undefined || provider === null ? {} : { ci_provider: provider }),
    ...(flags.numEvals === undefined ? {} : { num_evals: flags.numEvals }),
    gate: {
      min_score: flags.minScore ?? null,
      fail_on_adversarial: flags.failOnAdversarial === true,
      fail_on_high_variance: flags.failOnHighVariance === true,
      ...(flags.reducer === undefined ? {} : { reducer: reducerName(flags.reducer) }),
    },
  };
}

/**
 * Case ids for the batch: the line's id, else the task (as the server would derive it); a
 * repeated one gets " #2", " #3" so no case silently replaces another.
 */
export function caseIds(cases: { id?: string; task?: string }[]): string[] {
  const seen = new Map<string, number>();
  return cases.map((c) => {
    const base = c.id ?? defaultCaseId(c.task);
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base} #${n}`;
  });
}

export interface FinishedRun {
  run: EvaluationRun;
  comparison: CompareResponse | null;
  cases: RunCase[];
}

export async function finishAndRead(
  client: ServiceClient,
  runId: string,
  flags: RunFlags,
  notEvaluated: string[],
): Promise<FinishedRun> {
  const finished: FinishRunResponse = await client.evaluations.finish(runId, {
    ...(flags.baseline === undefined ? {} : { baseline: flags.baseline }),
    bless_on_pass: flags.blessOnPass === true,
    not_evaluated: notEvaluated,
    ...(flags.regressionDelta === undefined ? {} : { regression_delta: flags.regressionDelta }),
  });
  const detail = await client.evaluations.get(runId);
  return { run: finished.run, comparison: finished.comparison, cases: detail.cases };
}

/** The exit code a finished run stands for: 100 when its gate failed, 101 when it regressed. */
export function exitCodeOfRun(run: EvaluationRun): ExitCode {
  if (run.status === 'failed') return ExitCode.BELOW_MIN_SCORE;
  if (run.status === 'regressed') return ExitCode.REGRESSED;
  return ExitCode.OK;
}

/** The console page of a run, on the server the CLI talks to (the route the console's router serves). */
export function consoleLink(serverUrl: string, runId: string): string {
  return `${serverUrl.replace(/\/+$/, '')}${routes.consolePage.path}${consoleEvaluationHash(runId)}`;
}
