import { useState } from 'preact/hooks';
import { client } from '../api.js';
import { Code } from '../highlight.js';
import { href, navigate } from '../router.js';
import { CONSOLE_EVALUATIONS, consoleEvaluationPath, type EvaluationRun, type RunCase } from '../types.js';
import { ErrorBox, Loading, Section, fmtNumber, fmtPercent, useLoad } from '../ui.js';
import { Badge, RunFacts, fmtCost, fmtDuration, runName } from './evaluation-parts.js';

/** Failed cases first, then flaky ones, then the rest; evaluation order within each. */
const rank = (c: RunCase) => (c.passed ? (c.flaky ? 1 : 2) : 0);

/** One run (GET /v1/evaluations/{id}): its facts, a baseline to compare it with, and every case. */
export function EvaluationRunScreen({ runId }: { runId: string }) {
  const detail = useLoad(() => client.evaluations.get(runId), [runId]);
  if (detail.error) return <Section title="Run"><ErrorBox error={detail.error} /><p><a href={href([CONSOLE_EVALUATIONS])}>All runs</a></p></Section>;
  if (!detail.data) return <Loading what="the run" />;
  const { run, cases } = detail.data;
  const ordered = cases.map((c, i) => ({ c, i })).sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i).map(({ c }) => c);
  return (
    <>
      <Section title={runName(run)} id="run-title">
        <p><a href={href([CONSOLE_EVALUATIONS])}>All runs</a></p>
        <RunFacts run={run} />
      </Section>
      <Section title="Compare with a baseline" id="compare-title">
        <ChooseBaseline run={run} />
      </Section>
      <Section title={`Cases (${cases.length})`} id="cases-title">
        <p class="muted">Failed cases first, then flaky ones, then the others, each in the order it was evaluated.</p>
        {cases.length === 0 && <p class="muted">This run has no case yet.</p>}
        {ordered.map((c) => <CaseCard key={c.case_id} item={c} />)}
      </Section>
    </>
  );
}

/**
 * The baseline to compare with: the run's own baseline, the blessed run of its label (the API
 * takes a label for that), or any recent run. Reading the list changes nothing.
 */
function ChooseBaseline({ run }: { run: EvaluationRun }) {
  const recent = useLoad(() => client.evaluations.list({ limit: 50 }), []);
  const [choice, setChoice] = useState(run.baseline_id ?? run.label ?? '');
  const others = (recent.data?.runs ?? []).filter((r) => r.id !== run.id);
  return (
    <form
      class="row"
      onSubmit={(e) => {
        e.preventDefault();
        if (choice) navigate(consoleEvaluationPath(run.id, choice));
      }}
    >
      <label class="grow">
        Baseline
        <select value={choice} onChange={(e) => setChoice(e.currentTarget.value)}>
          <option value="">choose a run…</option>
          {run.baseline_id && <option value={run.baseline_id}>the run's own baseline ({run.baseline_id})</option>}
          {run.label && <option value={run.label}>the baseline of label “{run.label}”</option>}
          {others.map((r) => <option key={r.id} value={r.id}>{runName(r)} · {r.status} · {fmtPercent(r.summary.pass_rate)}</option>)}
        </select>
      </label>
      <button type="submit" disabled={!choice}>Compare side by side</button>
      <ErrorBox error={recent.error} />
    </form>
  );
}

function CaseCard({ item: c }: { item: RunCase }) {
  return (
    <article class={`case ${c.passed ? '' : 'failing'}`} aria-label={`Case ${c.name}`}>
      <h3>
        {c.name} <Badge kind={c.passed ? 'passed' : 'failed'} />
        {c.flaky && <Badge kind="flaky" />}
        {c.adversarial && <Badge kind="failed">adversarial</Badge>}
        {c.cache_hit && <Badge kind="unchanged">judged from the cache</Badge>}
      </h3>
      {c.gate_failures.length > 0 && <p><strong>Gate:</strong> {c.gate_failures.join('; ')}</p>}
      {c.error && <p class="error">{c.error}</p>}
      <p class="muted">
        case <code>{c.case_id}</code> · median {fmtNumber(c.median)} · variance {fmtNumber(c.variance)}
        {c.repeats > 1 && ` · ${c.repeats} repeats, pass rate ${fmtPercent(c.pass_rate)}`}
        {c.failed_evaluators > 0 && ` · ${c.failed_evaluators} evaluators failed`}
        {c.tokens && ` · ${c.tokens.input + c.tokens.output} tokens`} · cost {fmtCost(c.cost_usd)} · took {fmtDuration(c.duration_ms)}
      </p>
      <h4>Task</h4>
      {c.task ? <p class="task">{c.task}</p> : <p class="muted">No task was given.</p>}
      <h4>Code</h4>
      <Code code={c.code} label={`Code of case ${c.name}`} />
      <h4>Output</h4>
      {c.output ? <pre class="code output" tabIndex={0} aria-label={`Output of case ${c.name}`}>{c.output}</pre> : <p class="muted">No output was given.</p>}
      <Judges item={c} />
    </article>
  );
}

export function Judges({ item: c }: { item: RunCase }) {
  if (c.evaluators.length === 0) return <p class="muted">No evaluator answered.</p>;
  return (
    <div class="table-wrap">
      <table>
        <caption>Judges of {c.name}</caption>
        <thead><tr><th scope="col">Evaluator</th><th scope="col">Score</th><th scope="col">Feedback</th></tr></thead>
        <tbody>
          {c.evaluators.map((e) => (
            <tr key={e.evaluator}><td>{e.evaluator}</td><td>{fmtNumber(e.score)}</td><td>{e.feedback}</td></tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
