import { useState } from 'preact/hooks';
import { client, routes } from '../api.js';
import type { EvaluateResponse, JobRecord } from '../types.js';
import { ErrorBox, Loading, Section, fmtDate, fmtNumber, useAction, useLoad } from '../ui.js';

interface Run {
  job: JobRecord;
  result: EvaluateResponse | null;
  reasons: string[];
}

/** Why a run counts as a failure: median below the chosen score, adversarial, high variance, or the job failed. */
function classify(job: JobRecord, below: number): Run {
  const result = job.status === 'completed' ? (job.result as EvaluateResponse | null) : null;
  const reasons: string[] = [];
  if (job.status === 'failed') reasons.push('job failed');
  if (result) {
    if (result.median_score < below) reasons.push(`median ${fmtNumber(result.median_score)} < ${below}`);
    if (result.adversarial_detected) reasons.push('adversarial');
    if (result.high_variance) reasons.push('high variance');
  }
  return { job, result, reasons };
}

export function EvaluationsScreen() {
  const [below, setBelow] = useState(5);
  const jobs = useLoad(() => client.jobs.list({ limit: 100 }), []);
  const feedback = useLoad(() => client.llm.feedback({ limit: 50 }), []);
  const runs = (jobs.data?.jobs ?? [])
    .filter((j) => j.operation === 'evaluate')
    .map((j) => classify(j, below))
    .sort((a, b) => Number(b.reasons.length > 0) - Number(a.reasons.length > 0));
  // The API orders recurring feedback by importance (weight × times), which is the order kept here.
  const clusters = feedback.data?.feedback ?? [];

  return (
    <>
      <Section title="Evaluation runs" id="runs-title">
        <p class="muted">Evaluations run as background jobs (<code>Prefer: respond-async</code>, <code>service evaluate --async</code>); failures first.</p>
        <label>
          Count a run as failed when its median is below
          <input type="number" min="0" max="10" step="0.5" value={below} onInput={(e) => setBelow(Number(e.currentTarget.value) || 0)} />
        </label>
        <ErrorBox error={jobs.error} />
        {jobs.loading && <Loading what="evaluation runs" />}
        {jobs.data && runs.length === 0 && <p class="muted">No evaluation job among the last 100 jobs.</p>}
        {runs.map((run) => <RunCard key={run.job.job_id} run={run} />)}
      </Section>
      <Section title="Feedback clusters" id="feedback-title">
        <p class="muted">Feedback sentences that recur across evaluations (GET {routes.feedback.path}); weight fades with age.</p>
        <ErrorBox error={feedback.error} />
        {feedback.loading && <Loading what="feedback" />}
        {feedback.data && clusters.length === 0 && <p class="muted">No feedback recorded yet.</p>}
        {clusters.length > 0 && (
          <div class="table-wrap">
            <table>
              <caption class="sr-only">Recurring feedback, most important first</caption>
              <thead><tr><th scope="col">Feedback</th><th scope="col">Times</th><th scope="col">Weight</th><th scope="col">Last seen</th></tr></thead>
              <tbody>
                {clusters.map((f) => (
                  <tr key={f.text}>
                    <td>{f.text}</td><td>{f.count}</td><td>{fmtNumber(f.score)}</td><td>{fmtDate(f.last_seen)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
      <AnalyzeFailures />
    </>
  );
}

function RunCard({ run }: { run: Run }) {
  const { job, result, reasons } = run;
  return (
    <article class={`run ${reasons.length ? 'failing' : ''}`} aria-label={`Evaluation ${job.job_id}`}>
      <h3>
        {result ? `median ${fmtNumber(result.median_score)}` : job.status} <span class="muted">· {fmtDate(job.created_at)} · job {job.job_id.slice(0, 8)}</span>
      </h3>
      {reasons.length > 0 && <p><strong>Failure:</strong> {reasons.join(', ')}</p>}
      {job.error && <p class="error">{job.error}</p>}
      {result && (
        <>
          <p>{result.feedback}</p>
          <div class="table-wrap">
            <table>
              <thead><tr><th scope="col">Evaluator</th><th scope="col">Overall</th><th scope="col">Task</th><th scope="col">Quality</th><th scope="col">Workspace</th><th scope="col">Robustness</th><th scope="col">Hard-coded</th><th scope="col">Feedback</th></tr></thead>
              <tbody>
                {result.scores.map((s, i) => (
                  <tr key={i}>
                    <td>{i + 1}</td><td>{fmtNumber(s.overall)}</td><td>{fmtNumber(s.task_alignment)}</td><td>{fmtNumber(s.code_quality)}</td>
                    <td>{fmtNumber(s.workspace_usage)}</td><td>{fmtNumber(s.robustness)}</td><td>{s.hardcoded ? 'yes' : 'no'}</td><td>{s.feedback}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </article>
  );
}

function AnalyzeFailures() {
  const [minCount, setMinCount] = useState(1);
  const action = useAction(() => client.llm.analyzeFailures({ min_count: minCount }));
  return (
    <Section title="Analyze failures" id="analyze-title">
      <form class="row" onSubmit={(e) => { e.preventDefault(); void action.run(); }}>
        <label>
          Minimum occurrences
          <input type="number" min="1" value={minCount} onInput={(e) => setMinCount(Math.max(1, Number(e.currentTarget.value) || 1))} />
        </label>
        <button type="submit" disabled={action.busy}>Run analyze-failures</button>
      </form>
      <ErrorBox error={action.error} />
      {action.result && (action.result.clusters.length === 0 ? <p class="muted" role="status">No recurring failure.</p> : (
        <ol aria-label="Failure clusters">
          {action.result.clusters.map((c) => (
            <li key={c.representative}>
              <strong>{c.representative}</strong> <span class="muted">· {c.total_count}× · average score {fmtNumber(c.avg_score)}</span>
              {c.members.length > 1 && <ul>{c.members.map((m) => <li key={m}>{m}</li>)}</ul>}
            </li>
          ))}
        </ol>
      ))}
    </Section>
  );
}
