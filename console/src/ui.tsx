import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

/** An API error as the user needs it: the status, the code and the server's message. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const api = error instanceof ApiError ? error : null;
  return (
    <div class="error" role="alert">
      {api ? (
        <>
          <strong>
            {api.status} <code>{api.code ?? `http_${api.status}`}</code>
          </strong>{' '}
          {api.detail}
        </>
      ) : (
        String((error as Error)?.message ?? error)
      )}
    </div>
  );
}

export interface Loaded<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs a read when `deps` change; reads only (writes go through buttons). */
export function useLoad<T>(read: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: unknown; loading: boolean }>({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    read().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) => live && setState({ data: null, error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** A button's action with its own busy flag and error. */
export function useAction<A extends unknown[], T>(action: (...args: A) => Promise<T>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<T | null>(null);
  const run = async (...args: A): Promise<T | null> => {
    setBusy(true);
    setError(null);
    try {
      const value = await action(...args);
      setResult(value);
      return value;
    } catch (err) {
      setError(err);
      return null;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, result, setResult };
}

export function Section({ title, children, id }: { title: string; children: ComponentChildren; id?: string }) {
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

export function Loading({ what }: { what: string }) {
  return <p class="muted" role="status">Loading {what}…</p>;
}

/**
 * A confirmation dialog (native <dialog>: focus moves in, Escape cancels). It states exactly
 * what will be removed before anything is sent.
 */
export function Confirm(props: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
  busy?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  return (
    <dialog ref={ref} class="confirm" aria-labelledby="confirm-title" onCancel={(e) => { e.preventDefault(); props.onCancel(); }}>
      <h2 id="confirm-title">{props.title}</h2>
      <div>{props.children}</div>
      <div class="row">
        <button type="button" onClick={props.onCancel} autofocus>
          Cancel
        </button>
        <button type="button" class="danger" disabled={props.busy} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

export function fmtNumber(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  return Number.isInteger(value) ? String(value) : value.toFixed(digits);
}

/** Always `digits` decimals (score parts line up in a column). */
export function fmtFixed(value: number | null | undefined, digits = 4): string {
  return value === null || value === undefined || Number.isNaN(value) ? '—' : value.toFixed(digits);
}

export function fmtPercent(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${(value * 100).toFixed(1)}%`;
}

export function fmtDate(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toISOString().replace('T', ' ').slice(0, 19);
}

/** Copies text to the clipboard; says whether it worked (clipboard needs a secure context). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState('');
  return (
    <button
      type="button"
      onClick={() =>
        navigator.clipboard.writeText(text).then(
          () => setState('copied'),
          () => setState('select and copy by hand'),
        )
      }
    >
      {label}
      {state ? ` (${state})` : ''}
    </button>
  );
}
