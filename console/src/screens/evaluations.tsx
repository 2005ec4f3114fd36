import { useState } from 'preact/hooks';
import { client, filled, routes } from '../api.js';
import { href, navigate, type Route } from '../router.js';
import { CONSOLE_EVALUATIONS, RUN_STATUSES, consoleEvaluationPath, type EvaluationRun, type RunListQuery } from '../types.js';
import { ErrorBox, Loading, Section, fmtDate, fmtNumber, fmtPercent, useAction, useLoad } from '../ui.js';
import { Badge, Commit, fmtCost } from './evaluation-parts.js';

const FILTERS = ['label', 'branch', 'status'] as const;
type Filter = Partial<Record<(typeof FILTERS)[number], string>>;

function filterOf(route: Route): Filter {
  const filter: Filter = {};
  for (const name of FILTERS) {
    const value = route.query.get(name);
    if (value) filter[name] = value;
  }
  return filter;
}

/**
 * Every evaluation run, newest first, a page at a time (GET /v1/evaluations, keyset paging):
 * single evaluations, batches and background jobs alike. Filters and the page are in the link.
 */
export function EvaluationsScreen({ route }: { route: Route }) {
  const filter = filterOf(route);
  const cursor = route.query.get('cursor') ?? undefined;
  // Text from the URL: the server checks each value (422 naming the field).
  const runs = useLoad(
    () => client.evaluations.list({ ...(filled(filter) as RunListQuery), limit: 20, cursor }),
    [route.query.toString()],
  );
  const feedback = useLoad(() => client.llm.feedback({ limit: 50 }), []);
  // The API orders recurring feedback by importance (weight × times), which is the order kept here.
  const clusters = feedback.data?.feedback ?? [];
  const page = (extra: Record<string, string | undefined>) => href([CONSOLE_EVALUATIONS], { ...filter, ...extra });

  const onFilter = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const next: Record<string, string | undefined> = {};
    for (const name of FILTERS) next[name] = (form.get(name) as string).trim() || undefined;
    navigate([CONSOLE_EVALUATIONS], next);
  };

  return (
    <>
      <Section title="Evaluation runs" id="runs-title">
        <p class="muted">
          Every evaluation is kept as a run: a single <code>service evaluate</code> (a run of one case), a <code>--batch</code>, a
          background job. Newest first; open a run for its cases, or compare it with a baseline.
        </p>
        <form class="filters" onSubmit={onFilter} aria-label="Filter runs">
          <label>
            Label
            <input name="label" value={filter.label ?? ''} placeholder="main" />
          </label>
          <label>
            Branch
            <input name="branch" value={filter.branch ?? ''} />
          </label>
          <label>
            Status
            <select name="status" value={filter.status ?? ''}>
              <option value="">any</option>
              {RUN_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
            </select>
          </label>
          <button type="submit">Apply filter</button>
        </form>
        <ErrorBox error={runs.error} />
        {runs.loading && <Loading what="evaluation runs" />}
        {runs.data && <RunTable runs={runs.data.runs} />}
        <nav class="row" aria-label="Pages">
          {cursor && <a href={page({ cursor: undefined })}>First page</a>}
          {runs.data?.next_cursor && <a href={page({ cursor: runs.data.next_cursor })}>Next page</a>}
        </nav>
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

function RunTable({ runs }: { runs: EvaluationRun[] }) {
  if (runs.length === 0) return <p class="muted">No evaluation run matches this filter.</p>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="sr-only">Evaluation runs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Run</th><th scope="col">Label</th><th scope="col">Commit</th><th scope="col">Status</th><th scope="col">Pass rate</th>
            <th scope="col">Cases</th><th scope="col">Cost</th><th scope="col">Cache hits</th><th scope="col">Baseline</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.id}>
              <td><a href={href(consoleEvaluationPath(run.id))}>{fmtDate(run.created_at)}</a><div class="muted"><code>{run.id}</code></div></td>
              <td>{run.label ?? <span class="muted">—</span>}{run.blessed && <> <Badge kind="passed">baseline</Badge></>}</td>
              <td><Commit sha={run.git.commit} />{run.git.branch && <div class="muted">{run.git.branch}</div>}</td>
              <td><Badge kind={run.status} /></td>
              <td>{fmtPercent(run.summary.pass_rate)}</td>
              <td>{run.summary.passed}/{run.summary.cases}{run.summary.flaky > 0 && <span class="muted"> · {run.summary.flaky} flaky</span>}</td>
              <td>{fmtCost(run.summary.cost_usd)}</td>
              <td>{run.summary.cache_hits + run.summary.cache_misses === 0 ? '—' : `${run.summary.cache_hits}/${run.summary.cache_hits + run.summary.cache_misses}`}</td>
              <td>
                {run.baseline_id ? <a href={href(consoleEvaluationPath(run.id, run.baseline_id))}>compare</a> : <span class="muted">—</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
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
