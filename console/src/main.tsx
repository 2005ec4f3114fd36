import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { probeAbilities, type Abilities } from './abilities.js';
import { ApiError, client, session } from './api.js';
import { href, useRoute, type Route } from './router.js';
import { CONSOLE_COMPARE, CONSOLE_EVALUATIONS, ID_CHARS } from '../../src/core/vocabulary.js';
import { ActivityScreen } from './screens/activity.js';
import { EvaluationsScreen } from './screens/evaluations.js';
import { EvaluationRunScreen } from './screens/evaluation-run.js';
import { EvaluationCompareScreen } from './screens/evaluation-compare.js';
import { OperationsScreen } from './screens/operations.js';
import { PatternScreen } from './screens/pattern.js';
import { PatternsScreen } from './screens/patterns.js';
import { RecallScreen } from './screens/recall.js';
import { ErrorBox, Loading } from './ui.js';

const SCREENS = [
  { path: 'patterns', title: 'Patterns' },
  { path: 'recall', title: 'Recall debugger' },
  { path: 'evaluations', title: 'Evaluations' },
  { path: 'activity', title: 'Activity and value' },
  { path: 'operations', title: 'Operations' },
] as const;

type State = { kind: 'checking' } | { kind: 'key'; error: unknown } | { kind: 'ready'; can: Abilities } | { kind: 'failed'; error: unknown };

/** Checks the stored key (or none, in dev mode) with two reads, then learns what it may do. */
async function connect(): Promise<State> {
  try {
    await client.health();
    return { kind: 'ready', can: await probeAbilities() };
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return { kind: 'key', error: session.key() ? error : null };
    return { kind: 'failed', error };
  }
}

function App() {
  const route = useRoute();
  const [state, setState] = useState<State>({ kind: 'checking' });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    void connect().then(setState);
  }, [attempt]);
  const screen = SCREENS.find((s) => s.path === (route.path[0] === 'pattern' ? 'patterns' : route.path[0]));
  useEffect(() => {
    document.title = `${screen?.title ?? 'Not found'} · service console`;
  }, [screen]);

  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header>
        <strong class="brand">service console</strong>
        <nav aria-label="Screens">
          {SCREENS.map((s) => (
            <a key={s.path} href={href([s.path])} aria-current={screen?.path === s.path ? 'page' : undefined}>{s.title}</a>
          ))}
        </nav>
        {session.key() && (
          <button type="button" class="link" onClick={() => { session.clear(); setAttempt((a) => a + 1); }}>Forget key</button>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        {state.kind === 'checking' && <Loading what="the connection" />}
        {state.kind === 'failed' && <><ErrorBox error={state.error} /><button type="button" onClick={() => setAttempt((a) => a + 1)}>Try again</button></>}
        {state.kind === 'key' && <KeyForm error={state.error} onSaved={() => setAttempt((a) => a + 1)} />}
        {state.kind === 'ready' && <Screen route={route} can={state.can} />}
      </main>
    </>
  );
}

function Screen({ route, can }: { route: Route; can: Abilities }) {
  const [first, second] = route.path;
  const deleted = route.query.get('deleted');
  switch (first) {
    case 'patterns':
      return <>{deleted && <p class="notice" role="status">Deleted <code>{deleted}</code>.</p>}<h1>Patterns</h1><PatternsScreen route={route} can={can} /></>;
    case 'pattern':
      return <><h1>Pattern</h1><PatternScreen patternKey={second ?? ''} can={can} /></>;
    case 'recall':
      return <><h1>Recall debugger</h1><RecallScreen route={route} /></>;
    case CONSOLE_EVALUATIONS:
      // The run and comparison routes are the ones a run's Markdown comment links to (consoleEvaluationPath).
      if (second && route.path[2] === CONSOLE_COMPARE && route.path[3]) {
        return <><h1>Compare evaluation runs</h1><EvaluationCompareScreen runId={second} baselineId={route.path[3]} margin={route.query.get('regression_delta')} /></>;
      }
      if (second) return <><h1>Evaluation run</h1><EvaluationRunScreen runId={second} /></>;
      return <><h1>Evaluations</h1><EvaluationsScreen route={route} /></>;
    case 'activity':
      return <><h1>Activity and value</h1><ActivityScreen can={can} /></>;
    case 'operations':
      return <><h1>Operations</h1><OperationsScreen can={can} /></>;
    default:
      return <><h1>Not found</h1><p>No screen is called “{first}”. <a href={href(['patterns'])}>Go to patterns</a>.</p></>;
  }
}

/** The key is typed once per browser tab: sessionStorage, sent only as a header. */
function KeyForm({ error, onSaved }: { error: unknown; onSaved: () => void }) {
  const [key, setKey] = useState('');
  const [project, setProject] = useState(session.project() ?? '');
  return (
    <form class="card login" aria-labelledby="login-title" onSubmit={(e) => { e.preventDefault(); session.save(key.trim(), project.trim()); onSaved(); }}>
      <h1 id="login-title">Sign in with an API key</h1>
      <p class="muted">The key stays in this tab (sessionStorage) and is sent only as an Authorization header to this server.</p>
      <ErrorBox error={error} />
      <label>
        API key
        <input type="password" autocomplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} required autofocus />
      </label>
      <label>
        Project (optional, sent as X-Project-Id)
        <input value={project} onInput={(e) => setProject(e.currentTarget.value)} pattern={ID_CHARS} />
      </label>
      <button type="submit">Use this key</button>
    </form>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
