import { useState } from 'preact/hooks';
import { client, filled } from '../api.js';
import type { Abilities } from '../abilities.js';
import { href, navigate, type Route } from '../router.js';
import { SOURCES, type PatternListQuery, type PatternSummary, type RecallGetQuery } from '../types.js';
import { ErrorBox, Loading, Section, fmtDate, fmtNumber, useAction, useLoad } from '../ui.js';

const FILTERS = ['classification', 'source', 'min_score', 'max_score', 'updated_after', 'updated_before'] as const;
type Filter = Partial<Record<(typeof FILTERS)[number], string>>;

function filterOf(route: Route): Filter {
  const filter: Filter = {};
  for (const name of FILTERS) {
    const value = route.query.get(name);
    if (value) filter[name] = value;
  }
  return filter;
}

/** Date inputs give a day; the API takes a date-time. */
function apiFilter(filter: Filter): PatternListQuery {
  const day = (value: string | undefined, end: boolean) => (value ? `${value}T${end ? '23:59:59.999' : '00:00:00.000'}Z` : undefined);
  // Text from the URL: the server checks each value (422 naming the field).
  return filled({ ...filter, updated_after: day(filter.updated_after, false), updated_before: day(filter.updated_before, true) }) as PatternListQuery;
}

/**
 * Every pattern the filter selects that this key may browse, as full records, one JSON object
 * per line: one request (GET /v1/patterns/export streams them), so any number of patterns
 * exports within the default rate limits.
 */
async function exportNdjson(filter: Filter): Promise<{ lines: string; count: number }> {
  const lines = await client.exportPatterns(apiFilter(filter));
  let count = 0;
  for (let i = lines.indexOf('\n'); i >= 0; i = lines.indexOf('\n', i + 1)) count++;
  return { lines, count };
}

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export function PatternsScreen({ route, can }: { route: Route; can: Abilities }) {
  const filter = filterOf(route);
  const cursor = route.query.get('cursor') ?? undefined;
  const task = route.query.get('q') ?? '';
  const list = useLoad(() => client.listPatterns({ ...apiFilter(filter), limit: 20, cursor }), [route.query.toString()]);
  const exporting = useAction(exportNdjson);

  const onFilter = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const next: Record<string, string | undefined> = { q: task || undefined };
    for (const name of FILTERS) next[name] = (form.get(name) as string) || undefined;
    navigate(['patterns'], next);
  };
  const query = (extra: Record<string, string | undefined>) => ({ ...filter, q: task || undefined, ...extra });

  return (
    <>
      <SearchPanel task={task} filter={filter} />
      <Section title="Browse" id="browse-title">
        <form class="filters" onSubmit={onFilter} aria-label="Filter patterns">
          <label>
            Classification
            <select name="classification" value={filter.classification ?? ''}>
              <option value="">any</option>
              {/* Only what this key may browse: the server lists nothing of the others. */}
              {can.classifications.map((c) => <option key={c} value={c}>{c}</option>)}
            </select>
          </label>
          <label>
            Source
            <select name="source" value={filter.source ?? ''}>
              <option value="">any</option>
              {SOURCES.map((s) => <option key={s} value={s}>{s}</option>)}
            </select>
          </label>
          <label>
            Min success score
            <input name="min_score" type="number" min="0" max="10" step="0.1" value={filter.min_score ?? ''} />
          </label>
          <label>
            Max success score
            <input name="max_score" type="number" min="0" max="10" step="0.1" value={filter.max_score ?? ''} />
          </label>
          <label>
            Updated after
            <input name="updated_after" type="date" value={filter.updated_after ?? ''} />
          </label>
          <label>
            Updated before
            <input name="updated_before" type="date" value={filter.updated_before ?? ''} />
          </label>
          <button type="submit">Apply filter</button>
        </form>
        <div class="row">
          <button
            type="button"
            disabled={exporting.busy}
            onClick={async () => {
              const out = await exporting.run(filter);
              if (out) download('patterns.ndjson', out.lines);
            }}
          >
            {exporting.busy ? 'Exporting…' : 'Export this filter as NDJSON'}
          </button>
          {exporting.result && <span role="status">{exporting.result.count} {exporting.result.count === 1 ? 'pattern' : 'patterns'} exported</span>}
        </div>
        <ErrorBox error={exporting.error} />
        <ErrorBox error={list.error} />
        {list.loading && <Loading what="patterns" />}
        {list.data && <PatternTable patterns={list.data.patterns} />}
        <nav class="row" aria-label="Pages">
          {cursor && <a href={href(['patterns'], query({ cursor: undefined }))}>First page</a>}
          {list.data?.next_cursor && <a href={href(['patterns'], query({ cursor: list.data.next_cursor }))}>Next page</a>}
        </nav>
      </Section>
    </>
  );
}

function PatternTable({ patterns }: { patterns: PatternSummary[] }) {
  if (patterns.length === 0) return <p class="muted">No pattern matches this filter.</p>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="sr-only">Patterns, newest first</caption>
        <thead>
          <tr><th scope="col">Task</th><th scope="col">Class</th><th scope="col">Source</th><th scope="col">Success</th><th scope="col">Eval</th><th scope="col">Reuses</th><th scope="col">Updated</th></tr>
        </thead>
        <tbody>
          {patterns.map((p) => (
            <tr key={p.key}>
              <td><a href={href(['pattern', p.key])}>{p.task.length > 90 ? `${p.task.slice(0, 90)}…` : p.task}</a></td>
              <td>{p.classification}</td>
              <td>{p.source}</td>
              <td>{fmtNumber(p.success_score)}</td>
              <td>{fmtNumber(p.eval_score)}</td>
              <td>{p.reuse_count}</td>
              <td>{fmtDate(p.updated_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Search by meaning through GET /v1/recall: read-only, so nothing is counted as a reuse. */
function SearchPanel({ task, filter }: { task: string; filter: Filter }) {
  const [text, setText] = useState(task);
  const results = useLoad(
    () => (task ? client.recallGet({ task, limit: 10, ...(filled({ classification: filter.classification, source: filter.source, min_score: filter.min_score }) as Partial<RecallGetQuery>) }) : Promise.resolve(null)),
    [task, filter.classification, filter.source, filter.min_score],
  );
  return (
    <Section title="Search" id="search-title">
      <form
        class="row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(['patterns'], { ...filter, q: text.trim() || undefined });
        }}
      >
        <label class="grow">
          Task to search for
          <input name="q" type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="e.g. parse a CSV file" />
        </label>
        <button type="submit">Search</button>
      </form>
      <ErrorBox error={results.error} />
      {task && results.loading && <Loading what="matches" />}
      {results.data && (
        results.data.matches.length === 0 ? <p class="muted">No stored pattern is similar enough.</p> : (
          <ol class="matches" aria-label="Search results">
            {results.data.matches.map((m) => (
              <li key={m.pattern_key}>
                <a href={href(['pattern', m.pattern_key])}>{m.pattern.task}</a>{' '}
                <span class={`tier tier-${m.reuse_tier}`}>{m.reuse_tier}</span>{' '}
                <span class="muted">similarity {fmtNumber(m.similarity, 3)} · success {fmtNumber(m.pattern.success_score)} · reused {m.pattern.reuse_count}×</span>
              </li>
            ))}
          </ol>
        )
      )}
    </Section>
  );
}
