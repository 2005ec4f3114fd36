import { useState } from 'preact/hooks';
import { client } from '../api.js';
import { Code } from '../highlight.js';
import { href, navigate } from '../router.js';
import { CONSOLE_EVALUATIONS, consoleEvaluationPath, type CaseComparison, type EvaluationRun, type RunCase } from '../types.js';
import { ErrorBox, Loading, Section, fmtNumber, fmtPercent, useLoad } from '../ui.js';
import { Badge, Commit, RunLink, fmtCost } from './evaluation-parts.js';
import { Judges } from './evaluation-run.js';

const signed = (value: number | null, digits = 2) => (value === null ? '—' : `${value > 0 ? '+' : ''}${value.toFixed(digits)}`);
const passWord = (passed: boolean | null) => (passed === null ? '—' : passed ? 'passed' : 'failed');

/**
 * A run next to a baseline (GET /v1/evaluations/{id}/compare/{baseline}; the baseline may be a
 * label, meaning its blessed run): case by case in the API's order, regressions first, then
 * each case's two evaluations side by side.
 */
export function EvaluationCompareScreen({ runId, baselineId, margin }: { runId: string; baselineId: string; margin: string | null }) {
  // The margin comes from the link as text; the server checks it (422 naming the field).
  const compared = useLoad(() => client.evaluations.compare(runId, baselineId, margin ? Number(margin) : undefined), [runId, baselineId, margin]);
  const baseline = compared.data?.baseline.id;
  // Both runs' cases, for the task, code and judges' feedback next to each other.
  const cases = useLoad(
    () => (baseline
      ? Promise.all([client.evaluations.get(baseline), client.evaluations.get(runId)])
      : Promise.resolve(null)),
    [runId, baseline],
  );
  if (compared.error) return <Section title="Comparison"><ErrorBox error={compared.error} /><p><a href={href(consoleEvaluationPath(runId))}>Back to the run</a></p></Section>;
  if (!compared.data) return <Loading what="the comparison" />;
  const c = compared.data;
  const before = new Map((cases.data?.[0].cases ?? []).map((k) => [k.case_id, k]));
  const after = new Map((cases.data?.[1].cases ?? []).map((k) => [k.case_id, k]));
  return (
    <>
      <Section title="Baseline and this run" id="compare-runs-title">
        <p><a href={href([CONSOLE_EVALUATIONS])}>All runs</a></p>
        <div class="side-by-side">
          <RunColumn title="Baseline" run={c.baseline} />
          <RunColumn title="This run" run={c.run} />
        </div>
        <p aria-label="Comparison summary">
          Pass rate {signed(c.pass_rate_delta === null ? null : c.pass_rate_delta * 100, 1)} points · {c.counts.regressed} regressed ·{' '}
          {c.counts.missing} missing · {c.counts.new} new · {c.counts.improved} improved · {c.counts.unchanged} unchanged
        </p>
        <p class="muted">A case regressed when it passed and now fails, or its median dropped by more than {fmtNumber(c.delta)} (the judges' noise margin).</p>
        <MarginForm runId={runId} baselineId={baselineId} margin={c.delta} />
      </Section>
      <Section title="Cases, regressions first" id="compare-cases-title">
        {c.cases.length === 0 ? <p class="muted">Neither run has a case.</p> : <ChangeTable cases={c.cases} />}
      </Section>
      <Section title="Side by side" id="side-title">
        <ErrorBox error={cases.error} />
        {cases.loading && <Loading what="the cases of both runs" />}
        {cases.data && c.cases.map((k) => <CasePair key={k.case_id} change={k} before={before.get(k.case_id)} after={after.get(k.case_id)} />)}
      </Section>
    </>
  );
}

/** Compares again with another noise margin: a new link (reading only), so it can be shared. */
function MarginForm({ runId, baselineId, margin }: { runId: string; baselineId: string; margin: number }) {
  const [value, setValue] = useState(String(margin));
  return (
    <form class="row" onSubmit={(e) => { e.preventDefault(); navigate(consoleEvaluationPath(runId, baselineId), { regression_delta: value.trim() || undefined }); }}>
      <label>
        Noise margin (median points)
        <input type="number" min="0" max="10" step="0.1" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
      </label>
      <button type="submit">Compare with this margin</button>
    </form>
  );
}

function RunColumn({ title, run }: { title: string; run: EvaluationRun }) {
  return (
    <section class="card-inner" aria-label={title}>
      <h3>{title}</h3>
      <p><RunLink run={run} /> <Badge kind={run.status} /></p>
      <p class="muted">
        <Commit sha={run.git.commit} /> {run.git.branch ?? ''} · pass rate {fmtPercent(run.summary.pass_rate)} ({run.summary.passed}/{run.summary.cases}) ·{' '}
        cost {fmtCost(run.summary.cost_usd)}
      </p>
    </section>
  );
}

function ChangeTable({ cases }: { cases: CaseComparison[] }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="sr-only">Cases compared with the baseline, regressions first</caption>
        <thead>
          <tr>
            <th scope="col">Change</th><th scope="col">Case</th><th scope="col">Baseline median</th><th scope="col">Median</th><th scope="col">Δ</th>
            <th scope="col">Baseline</th><th scope="col">This run</th>
          </tr>
        </thead>
        <tbody>
          {cases.map((k) => (
            <tr key={k.case_id} class={`change-${k.change}`}>
              <td><Badge kind={k.change} />{k.flaky && <Badge kind="flaky" />}</td>
              <td>{k.name}</td>
              <td>{fmtNumber(k.baseline_median)}</td>
              <td>{fmtNumber(k.median)}</td>
              <td>{signed(k.delta)}</td>
              <td>{passWord(k.baseline_passed)}</td>
              <td>{passWord(k.passed)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One case in both runs; regressed and missing cases are open, the others one click away. */
function CasePair({ change, before, after }: { change: CaseComparison; before?: RunCase; after?: RunCase }) {
  return (
    <details class={`case change-${change.change}`} open={change.change === 'regressed' || change.change === 'missing'}>
      <summary>
        <Badge kind={change.change} /> <strong>{change.name}</strong> <span class="muted">median {fmtNumber(change.baseline_median)} → {fmtNumber(change.median)}</span>
      </summary>
      <div class="side-by-side">
        <CaseSide title="Baseline" name={change.name} item={before} />
        <CaseSide title="This run" name={change.name} item={after} />
      </div>
    </details>
  );
}

function CaseSide({ title, name, item }: { title: string; name: string; item?: RunCase }) {
  return (
    <section aria-label={`${title}: ${name}`}>
      <h4>{title}</h4>
      {!item ? <p class="muted">Not in this run.</p> : (
        <>
          <p>
            <Badge kind={item.passed ? 'passed' : 'failed'} /> median {fmtNumber(item.median)}
            {item.gate_failures.length > 0 && <span class="muted"> · {item.gate_failures.join('; ')}</span>}
          </p>
          {item.task && <p class="task">{item.task}</p>}
          <Code code={item.code} label={`${title} code of ${name}`} />
          <Judges item={item} />
        </>
      )}
    </section>
  );
}
