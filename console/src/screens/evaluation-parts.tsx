import { href } from '../router.js';
import { consoleEvaluationPath, type EvaluationRun } from '../types.js';
import { fmtDate, fmtNumber, fmtPercent } from '../ui.js';

/** What the evaluation screens share: how a run is named, linked and summed up. */

/** Dollars with enough decimals for a judge call's fraction of a cent; — when not recorded. */
export function fmtCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return '—';
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

export function fmtDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A commit as people read it: its first 12 characters (the full one in the title). */
export function Commit({ sha }: { sha: string | null }) {
  return sha ? <code title={sha}>{sha.slice(0, 12)}</code> : <span class="muted">—</span>;
}

export function Badge({ kind, children }: { kind: string; children?: string }) {
  return <span class={`badge badge-${kind}`}>{children ?? kind}</span>;
}

/** A run's name in lists and headings: its label and time (runs without a label show their id). */
export function runName(run: EvaluationRun): string {
  return `${run.label ?? run.id} · ${fmtDate(run.created_at)}`;
}

export function RunLink({ run }: { run: EvaluationRun }) {
  return <a href={href(consoleEvaluationPath(run.id))}>{runName(run)}</a>;
}

/** A run's facts: where it came from, how it was judged, what it found and cost. */
export function RunFacts({ run }: { run: EvaluationRun }) {
  const { summary: s, judge, git } = run;
  return (
    <dl class="facts">
      <dt>Run id</dt><dd><code>{run.id}</code></dd>
      <dt>Label</dt><dd>{run.label ?? '—'}{run.blessed && <> <Badge kind="passed">baseline of its label</Badge></>}</dd>
      <dt>Status</dt><dd><Badge kind={run.status} /></dd>
      <dt>Created</dt><dd>{fmtDate(run.created_at)}</dd>
      <dt>Finished</dt><dd>{fmtDate(run.finished_at)}</dd>
      <dt>Commit</dt><dd><Commit sha={git.commit} /> {git.branch && <span class="muted">on {git.branch}</span>}</dd>
      <dt>CI provider</dt><dd>{run.ci_provider ?? '—'}</dd>
      <dt>Judge</dt>
      <dd>
        {judge.provider ?? 'no provider'} · {judge.model ?? 'default model'} · prompt {judge.prompt_version} · {judge.evaluators}{' '}
        {judge.evaluators === 1 ? 'evaluator' : 'evaluators'} · temperature {fmtNumber(judge.temperature)}
      </dd>
      <dt>Gate</dt>
      <dd>
        {run.gate.min_score === null ? 'no minimum score' : `median ≥ ${fmtNumber(run.gate.min_score)}`}
        {run.gate.fail_on_adversarial && ' · fails on adversarial'}
        {run.gate.fail_on_high_variance && ' · fails on high variance'}
      </dd>
      <dt>Cases</dt><dd>{s.cases} ({s.passed} passed, {s.failed} failed{s.flaky > 0 ? `, ${s.flaky} flaky` : ''})</dd>
      <dt>Pass rate</dt><dd>{fmtPercent(s.pass_rate)}{s.pass_hat_k !== null && <span class="muted"> · pass^k {fmtPercent(s.pass_hat_k)}</span>}</dd>
      <dt>Cost</dt><dd>{fmtCost(s.cost_usd)}{s.tokens && <span class="muted"> · {s.tokens.input + s.tokens.output} tokens ({s.tokens.input} in, {s.tokens.output} out)</span>}</dd>
      <dt>Judge cache</dt><dd>{s.cache_hits} hits, {s.cache_misses} misses</dd>
      <dt>Duration</dt><dd>{fmtDuration(s.duration_ms)}</dd>
      {run.comparison && (
        <>
          <dt>Against its baseline</dt>
          <dd>
            {run.comparison.regressed} regressed, {run.comparison.missing} missing, {run.comparison.new} new, {run.comparison.improved} improved,{' '}
            {run.comparison.unchanged} unchanged
          </dd>
        </>
      )}
    </dl>
  );
}
