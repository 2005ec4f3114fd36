import { useState } from 'preact/hooks';
import { client } from '../api.js';
import { Code } from '../highlight.js';
import { navigate } from '../router.js';
import { LineChart } from '../charts.js';
import { CLASSIFICATIONS, type ExportRecord, type PatternHistoryResponse, type PatternOutcomesResponse } from '../types.js';
import { Confirm, ErrorBox, Loading, Section, fmtDate, fmtNumber, useAction, useLoad } from '../ui.js';
import { allows, type Abilities } from '../abilities.js';

export function PatternScreen({ patternKey, can }: { patternKey: string; can: Abilities }) {
  const record = useLoad(() => client.getPattern(patternKey), [patternKey]);
  const history = useLoad(() => client.patternHistory(patternKey), [patternKey]);
  const outcomes = useLoad(() => client.patternOutcomes(patternKey, { limit: 50 }), [patternKey]);
  if (record.error) return <Section title="Pattern"><ErrorBox error={record.error} /></Section>;
  if (!record.data) return <Loading what="the pattern" />;
  const p = record.data;
  return (
    <>
      <Section title="Pattern" id="pattern-title">
        <p class="muted"><code>{p.key}</code></p>
        <h3>Task</h3>
        <p class="task">{p.task}</p>
        <dl class="facts">
          <dt>Success score</dt><dd>{fmtNumber(p.success_score)}</dd>
          <dt>Eval score</dt><dd>{fmtNumber(p.eval_score)}</dd>
          <dt>Reuse count</dt><dd>{p.reuse_count}</dd>
          <dt>Classification</dt><dd>{p.classification}</dd>
          <dt>Source</dt><dd>{p.source}</dd>
          <dt>Author</dt><dd>{p.author ?? '—'}</dd>
          <dt>Run id</dt><dd>{p.run_id ?? '—'}</dd>
          <dt>Redacted</dt><dd>{p.redacted ? 'yes' : 'no'}</dd>
          <dt>Created</dt><dd>{fmtDate(p.created_at)}</dd>
          <dt>Updated</dt><dd>{fmtDate(p.updated_at)}</dd>
          <dt>Expires</dt><dd>{fmtDate(p.expires_at)}</dd>
        </dl>
        <h3>Code</h3>
        <Code code={p.code} label="Code of the pattern" />
        <h3>Output</h3>
        {p.output ? <pre class="code" tabIndex={0} aria-label="Output of the run">{p.output}</pre> : <p class="muted">No output was stored.</p>}
      </Section>
      <Section title="Skills and eval history" id="history-title">
        <ErrorBox error={history.error} />
        {history.data && <History history={history.data} />}
      </Section>
      <Section title="Outcomes and lessons" id="outcomes-title">
        <ErrorBox error={outcomes.error} />
        {outcomes.data && <Outcomes outcomes={outcomes.data} />}
      </Section>
      <Section title="Curate" id="curate-title">
        <Reclassify record={p} onDone={record.reload} can={can} />
        <Tag record={p} onDone={history.reload} can={can} />
        <Delete record={p} can={can} />
      </Section>
    </>
  );
}

function Reclassify({ record, onDone, can }: { record: ExportRecord; onDone: () => void; can: Abilities }) {
  const [value, setValue] = useState(record.classification);
  const action = useAction(() => client.governance.classify(record.key, value));
  if (!can.admin) return <p class="muted">Reclassifying and deleting need an admin key.</p>;
  return (
    <form class="row" onSubmit={async (e) => { e.preventDefault(); if (await action.run()) onDone(); }}>
      <label>
        New classification
        <select value={value} onChange={(e) => setValue(e.currentTarget.value as ExportRecord['classification'])}>
          {CLASSIFICATIONS.map((c) => <option key={c} value={c}>{c}</option>)}
        </select>
      </label>
      <button type="submit" disabled={action.busy || value === record.classification}>Reclassify</button>
      <ErrorBox error={action.error} />
    </form>
  );
}

function History({ history }: { history: PatternHistoryResponse }) {
  // The API answers newest first; the chart reads left to right, oldest first.
  const points = [...history.eval_scores].reverse().map((value, i) => ({ label: `#${i + 1}`, value }));
  return (
    <>
      <p>
        Skill tags:{' '}
        {history.skills.length === 0 ? <span class="muted">none</span> : (
          <span aria-label="Skill tags">{history.skills.map((s) => <span key={s} class="tag">{s}</span>)}</span>
        )}
      </p>
      {points.length === 0 ? <p class="muted">No eval observation recorded.</p> : (
        <>
          <p>Eval observations, newest first: <span aria-label="Eval history">{history.eval_scores.map((v) => fmtNumber(v)).join(', ')}</span></p>
          <LineChart title="Eval scores, oldest to newest" points={points} max={10} />
        </>
      )}
    </>
  );
}

/** How reusing the pattern went, newest first; a failure's detail is the lesson agents see. */
function Outcomes({ outcomes }: { outcomes: PatternOutcomesResponse }) {
  if (outcomes.outcomes.length === 0) return <p class="muted">No outcome reported: nobody has said yet whether reusing this pattern worked.</p>;
  const failed = outcomes.outcomes.filter((o) => !o.passed).length;
  return (
    <>
      <p>{outcomes.outcomes.length} reported, {failed} failed (newest first).</p>
      <table aria-label="Reported outcomes">
        <thead><tr><th>When</th><th>Result</th><th>Score</th><th>Source</th><th>Asked for</th><th>Lesson</th></tr></thead>
        <tbody>
          {outcomes.outcomes.map((o) => (
            <tr key={o.recall_id}>
              <td>{fmtDate(o.at)}</td>
              <td>{o.passed ? 'passed' : 'failed'}</td>
              <td>{o.score === null ? '—' : fmtNumber(o.score)}</td>
              <td>{o.source ?? '—'}</td>
              <td class="task">{o.query}</td>
              <td>{o.detail ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function Tag({ record, onDone, can }: { record: ExportRecord; onDone: () => void; can: Abilities }) {
  const [text, setText] = useState('');
  const action = useAction((skills: string[]) => client.skillsRegister({ pattern_key: record.key, skills }));
  const skills = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (!allows(can, 'skills:register')) return <p class="muted">Replacing skill tags needs an editor key.</p>;
  return (
    <form class="row" onSubmit={async (e) => { e.preventDefault(); if (await action.run(skills)) onDone(); }}>
      <label class="grow">
        Skill tags (comma-separated; they replace the pattern's tags; editor keys and above)
        <input value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="csv, parsing" />
      </label>
      <button type="submit" disabled={action.busy || skills.length === 0}>Replace skill tags</button>
      {action.result && <span role="status">Tags now: {action.result.skills.join(', ')}</span>}
      <ErrorBox error={action.error} />
    </form>
  );
}

function Delete({ record, can }: { record: ExportRecord; can: Abilities }) {
  const [asking, setAsking] = useState(false);
  const action = useAction(() => client.deletePattern(record.key));
  if (!can.admin) return null;
  return (
    <>
      <button type="button" class="danger" onClick={() => setAsking(true)}>Delete pattern…</button>
      <ErrorBox error={action.error} />
      {asking && (
        <Confirm
          title="Delete this pattern?"
          confirmLabel="Delete 1 pattern"
          busy={action.busy}
          onCancel={() => setAsking(false)}
          onConfirm={async () => {
            const done = await action.run();
            setAsking(false);
            if (done) navigate(['patterns'], { deleted: done.pattern_key });
          }}
        >
          <p>This removes <strong>1 pattern</strong> for good (there is no undo):</p>
          <p><code>{record.key}</code></p>
          <p class="task">{record.task}</p>
          <p class="muted">Reused {record.reuse_count} times; success score {fmtNumber(record.success_score)}.</p>
        </Confirm>
      )}
    </>
  );
}
