import { useState } from 'preact/hooks';
import { client, filled, pathOf, queryString, routes, session } from '../api.js';
import { href, navigate, type Route } from '../router.js';
import { CLASSIFICATIONS, type Explain, type RecallGetQuery, type RecallResponse } from '../types.js';
import { CopyButton, ErrorBox, Loading, Section, fmtFixed, useLoad } from '../ui.js';

const FIELDS = ['task', 'limit', 'classification', 'min_score', 'recency_weight', 'deduplicate', 'eval_weighted'] as const;
type Params = Partial<Record<(typeof FIELDS)[number], string>>;

const EXPLAIN_PARTS: (keyof Explain)[] = ['cosine', 'centered_cosine', 'residual_cosine', 'bm25', 'code_bm25', 'ngram', 'blended', 'eval_factor', 'recency_factor', 'score'];

function paramsOf(route: Route): Params {
  const params: Params = {};
  for (const name of FIELDS) {
    const value = route.query.get(name);
    if (value) params[name] = value;
  }
  return params;
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** A value as one shell word: bare when it holds only characters no shell treats specially, else quoted. */
const shellWord = (text: string) => (/^[A-Za-z0-9._-]+$/.test(text) ? text : shellQuote(text));

const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;
const inRange = (value: string, min: number, max: number) => DECIMAL.test(value) && Number(value) >= min && Number(value) <= max;
/** What each option of the link must look like before a copy line shows it (the API's bounds). */
const COPY_RULES: { name: keyof Params; ok: (value: string) => boolean; says: string }[] = [
  { name: 'limit', ok: (v) => /^\d+$/.test(v) && inRange(v, 1, 50), says: 'a whole number from 1 to 50' },
  { name: 'classification', ok: (v) => (CLASSIFICATIONS as readonly string[]).includes(v), says: CLASSIFICATIONS.join(', ') },
  { name: 'min_score', ok: (v) => inRange(v, 0, 10), says: 'a number from 0 to 10' },
  { name: 'recency_weight', ok: (v) => inRange(v, 0, 1), says: 'a number from 0 to 1' },
  { name: 'deduplicate', ok: (v) => v === 'true' || v === 'false', says: 'true or false' },
  { name: 'eval_weighted', ok: (v) => v === 'true' || v === 'false', says: 'true or false' },
];

/**
 * Why the link's options cannot become a command line (the first bad one), or null. A link is
 * anyone's to write: a value that is not what the option takes shows no line at all, and every
 * value that does show is shell-quoted anyway.
 */
export function copyLineProblem(params: Params): string | null {
  for (const rule of COPY_RULES) {
    const value = params[rule.name];
    if (value !== undefined && !rule.ok(value)) return `${rule.name} must be ${rule.says}`;
  }
  return null;
}

/** The same read-only query as a curl line (the key from the environment, never written out). */
export function curlLine(params: Params): string {
  // queryString percent-encodes every value; the whole URL is one quoted word.
  const url = `${location.origin}${pathOf(routes.recallGet)}${queryString(filled({ ...params, explain: true }))}`;
  const project = session.project();
  return [
    'curl -s',
    ...(session.key() ? ['-H "Authorization: Bearer $SERVICE_API_KEY"'] : []),
    ...(project ? [`-H ${shellQuote(`X-Project-Id: ${project}`)}`] : []),
    shellQuote(url),
  ].join(' ');
}

export function cliLine(params: Params): string {
  // `service recall` is read-only unless --count-reuse, like the page's query.
  const parts = ['service recall --explain'];
  if (params.limit) parts.push(`--limit ${shellWord(params.limit)}`);
  if (params.classification) parts.push(`--classification ${shellWord(params.classification)}`);
  if (params.min_score) parts.push(`--min-score ${shellWord(params.min_score)}`);
  if (params.recency_weight) parts.push(`--recency-weight ${shellWord(params.recency_weight)}`);
  if (params.deduplicate === 'false') parts.push('--no-dedupe');
  if (params.eval_weighted === 'false') parts.push('--no-eval-weighted');
  const project = session.project();
  if (project) parts.push(`--project ${shellQuote(project)}`);
  parts.push(shellQuote(params.task ?? ''));
  return parts.join(' ');
}

export function RecallScreen({ route }: { route: Route }) {
  const params = paramsOf(route);
  const problem = copyLineProblem(params);
  const [draft, setDraft] = useState<Params>(params);
  const result = useLoad(
    // The page's fields are text from the URL; the server reads them as the query string they are.
    () => (params.task ? client.call(routes.recallGet, { query: { ...filled(params), task: params.task, explain: true } as RecallGetQuery }) : Promise.resolve(null)),
    [route.query.toString()],
  );
  const set = (name: keyof Params) => (e: Event) => setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement).value });

  return (
    <>
      <Section title="Recall debugger" id="debugger-title">
        <p class="muted">Runs the read-only recall (GET {routes.recallGet.path} with explain): nothing is counted as a reuse.</p>
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            navigate(['recall'], draft as Record<string, string>);
          }}
        >
          <label class="wide">
            Task
            <textarea name="task" rows={3} value={draft.task ?? ''} onInput={set('task')} required />
          </label>
          <label>
            Matches (1–50)
            <input type="number" min="1" max="50" value={draft.limit ?? '5'} onInput={set('limit')} />
          </label>
          <label>
            Classification
            <select value={draft.classification ?? ''} onChange={set('classification')}>
              <option value="">any</option>
              {CLASSIFICATIONS.map((c) => <option key={c} value={c}>{c}</option>)}
            </select>
          </label>
          <label>
            Min success score
            <input type="number" min="0" max="10" step="0.1" value={draft.min_score ?? ''} onInput={set('min_score')} />
          </label>
          <label>
            Recency weight (0–1)
            <input type="number" min="0" max="1" step="0.05" value={draft.recency_weight ?? ''} onInput={set('recency_weight')} />
          </label>
          <label>
            Deduplicate
            <select value={draft.deduplicate ?? 'true'} onChange={set('deduplicate')}>
              <option value="true">yes</option>
              <option value="false">no</option>
            </select>
          </label>
          <label>
            Eval-weighted
            <select value={draft.eval_weighted ?? 'true'} onChange={set('eval_weighted')}>
              <option value="true">yes</option>
              <option value="false">no</option>
            </select>
          </label>
          <button type="submit">Explain recall</button>
        </form>
      </Section>
      {params.task && (
        <Section title="The same query elsewhere" id="copy-title">
          {problem ? <p class="muted" role="status">No command line for this link: {problem}.</p> : (
            <>
              <pre class="code" aria-label="curl command">{curlLine(params)}</pre>
              <CopyButton text={curlLine(params)} label="Copy curl" />
              <pre class="code" aria-label="service recall command">{cliLine(params)}</pre>
              <CopyButton text={cliLine(params)} label="Copy service recall" />
            </>
          )}
        </Section>
      )}
      <ErrorBox error={result.error} />
      {params.task && result.loading && <Loading what="matches" />}
      {result.data && <Explained response={result.data} />}
    </>
  );
}

function Explained({ response }: { response: RecallResponse }) {
  const policy = response.tier_policy;
  return (
    <>
      <Section title="Tier policy in force" id="policy-title">
        {policy ? (
          <dl class="facts">
            <dt>Policy</dt><dd>{policy.policy}</dd>
            <dt>Duplicate threshold</dt><dd>{fmtFixed(policy.duplicate_threshold)}</dd>
            <dt>Adapt threshold</dt><dd>{fmtFixed(policy.adapt_threshold)}</dd>
            <dt>Source</dt><dd>{policy.source}</dd>
          </dl>
        ) : <p class="muted">This server does not report its tier policy.</p>}
      </Section>
      <Section title="Ranked matches" id="ranked-title">
        {response.matches.length === 0 ? <p class="muted">No match.</p> : (
          <div class="table-wrap">
            <table class="explain">
              <caption class="sr-only">Matches with the parts of their scores</caption>
              <thead>
                <tr>
                  <th scope="col">#</th><th scope="col">Task</th><th scope="col">Tier</th><th scope="col">Rule</th><th scope="col">Threshold</th><th scope="col">Similarity</th>
                  {EXPLAIN_PARTS.map((part) => <th key={part} scope="col">{part.replace('_', ' ')}</th>)}
                  <th scope="col">outcomes</th>
                </tr>
              </thead>
              <tbody>
                {response.matches.map((m, i) => (
                  <tr key={m.pattern_key}>
                    <td>{i + 1}</td>
                    <td><a href={href(['pattern', m.pattern_key])}>{m.pattern.task.slice(0, 80)}</a></td>
                    <td><span class={`tier tier-${m.reuse_tier}`}>{m.reuse_tier}</span></td>
                    <td>{m.explain?.tier_rule ?? '—'}</td>
                    <td>{fmtFixed(m.explain?.tier_threshold)}</td>
                    <td>{fmtFixed(m.similarity)}</td>
                    {EXPLAIN_PARTS.map((part) => <td key={part} data-part={part}>{fmtFixed(m.explain?.[part] as number | undefined)}</td>)}
                    <td data-part="outcome">{m.explain?.outcome ? fmtFixed(m.explain.outcome.adjustment) : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {response.warnings?.map((w) => <p key={w} class="muted">{w}</p>)}
      </Section>
      <OutcomeParts response={response} />
    </>
  );
}

/** What reported outcomes did to each match: the adjustment, the failures it came from, the lessons shown. */
function OutcomeParts({ response }: { response: RecallResponse }) {
  const moved = response.matches.map((m, i) => ({ m, rank: i + 1 })).filter(({ m }) => m.explain?.outcome || m.lessons?.length);
  return (
    <Section title="Outcome part" id="outcome-title">
      {moved.length === 0 ? <p class="muted">No reported outcome moved these matches.</p> : moved.map(({ m, rank }) => {
        const o = m.explain?.outcome;
        return (
          <div key={m.pattern_key} class="outcome-part" data-pattern={m.pattern_key}>
            <h3>#{rank} {m.pattern.task.slice(0, 80)}</h3>
            {o && (
              <dl class="facts">
                <dt>Adjustment</dt><dd>{fmtFixed(o.adjustment)}</dd>
                <dt>Similar failures</dt><dd>{fmtFixed(o.local)}</dd>
                <dt>This exact wording</dt><dd>{o.exact ?? 'not asked before'} ({fmtFixed(o.exact_move)})</dd>
              </dl>
            )}
            {o && o.failures.length > 0 && (
              <table class="explain">
                <caption>Failures it came from</caption>
                <thead><tr><th scope="col">Query</th><th scope="col">Similarity</th><th scope="col">Penalty share</th><th scope="col">When</th></tr></thead>
                <tbody>
                  {o.failures.map((f) => (
                    <tr key={f.recall_id}><td>{f.query.slice(0, 100)}</td><td>{fmtFixed(f.similarity)}</td><td>{fmtFixed(f.penalty)}</td><td>{f.at}</td></tr>
                  ))}
                </tbody>
              </table>
            )}
            {m.lessons && m.lessons.length > 0 && (
              <ul class="lessons" aria-label="Lessons">
                {m.lessons.map((l) => <li key={`${l.at}${l.query}`}>failed for “{l.query.slice(0, 100)}” ({fmtFixed(l.similarity)}): {l.detail}</li>)}
              </ul>
            )}
          </div>
        );
      })}
    </Section>
  );
}
