import { ApiError, TransportError } from '../../src/client/index.js';
import type { Io } from './context.js';
import { exitCodeFor } from './exit-codes.js';
import { asInvoked } from './package-info.js';
import { forTerminal, terminalColor } from './terminal-text.js';

/** How an error is shown: JSON (with --json / --format json) and the flags of the command. */
export interface ErrorView {
  json?: boolean;
  /** Long flags of the running command (`--limit`…): a wire field with a flag is named by it. */
  flags?: ReadonlySet<string>;
  /** What the error is about when a command reports several (a batch case, an input line). */
  subject?: string;
  /** The command's --retry-wait, so a rate-limit hint says whether the CLI waited. */
  retryWaitSeconds?: number;
}

/** Keys, retention settings and per-project keys exist only on a server with DB auth. */
const SERVER_WITHOUT_DB_AUTH =
  'this server does not run DB auth: API keys and per-project settings need SERVICE_AUTH_MODE=db (or auto) with SERVICE_DATABASE_URL on the server';

interface FieldProblem {
  /** `--limit` when the command has that flag, else the wire field (`records.3.task`). */
  name: string;
  message: string;
}

/**
 * Hints name the CLI command to run, never an HTTP route (the server's messages are written
 * for HTTP clients). Matched on the status and the server's detail; the first match wins, so
 * specific entries come before the general one of their status. They say `service …`, and
 * are shown under the name the program was called by (asInvoked), like the server's messages.
 */
const HINTS: { status: number; detail?: RegExp; hint: string | ((view: ErrorView) => string | undefined) }[] = [
  { status: 401, detail: /bootstrap token/, hint: "the token must equal the server's SERVICE_BOOTSTRAP_TOKEN (pass it with --token, or type it at the prompt)" },
  { status: 401, hint: 'pass --api-key or set SERVICE_API_KEY (in the shell or an --env-file)' },
  // Refusals that no other key would change: the server's auth mode, the key's project, the plan.
  { status: 403, detail: /DB auth mode/, hint: SERVER_WITHOUT_DB_AUTH },
  {
    status: 403,
    detail: /API key is bound to project/,
    hint: 'drop --project (or SERVICE_PROJECT): a DB key works in its own project; owners manage other projects\' keys with `service keys … --for-project ID`',
  },
  { status: 403, detail: /plan/, hint: 'see `service billing status` for the plan and its limits' },
  { status: 403, detail: /permission is required|key cannot|owner keys|only an owner|limited to its owner/, hint: 'use a key with a higher role (see `service keys list`), or the project the key belongs to' },
  { status: 404, detail: /DB auth mode/, hint: SERVER_WITHOUT_DB_AUTH },
  { status: 404, detail: /rollup has been computed/, hint: 'compute it first: `service analytics rollup <window>`' },
  { status: 409, detail: /already bootstrapped/, hint: 'create further keys with `service keys create --name NAME`' },
  {
    status: 429,
    detail: /rate limit/,
    hint: (view) => (view.retryWaitSeconds === 0
      ? 'the CLI did not wait (--retry-wait 0): try again later, or let it wait with --retry-wait SECONDS'
      : 'the CLI waited as long as --retry-wait allows (default 120 s); raise it, or slow down'),
  },
  { status: 501, detail: /LLM/, hint: 'the server has no LLM provider: start it with SERVICE_LLM_PROVIDER and the provider key' },
];

/** The wire field `eval_score` as the flag `--eval-score`, when the command has such a flag. */
function nameOf(path: string, flags: ReadonlySet<string> | undefined): string {
  const flag = `--${path.replace(/_/g, '-')}`;
  return flags?.has(flag) ? flag : path || 'body';
}

function describe(err: unknown, view: ErrorView, program: string | undefined) {
  let message = err instanceof Error ? err.message : String(err);
  let fields: FieldProblem[] = [];
  let hint: string | undefined;
  let status: number | undefined;
  let requestId: string | undefined;
  if (err instanceof ApiError) {
    status = err.status;
    message = err.detail;
    fields = err.fieldErrors.map((f) => ({ name: nameOf(f.path, view.flags), message: f.message }));
    // A field that is a flag: say it the way the user typed it (`--limit: Too big…`).
    const first = fields[0];
    if (first && first.name.startsWith('--')) {
      message = `invalid ${first.name}: ${first.message}`;
      fields = fields.slice(1);
    } else {
      fields = fields.filter((f) => !message.includes(`${f.name}: ${f.message}`));
    }
    const found = HINTS.find((h) => h.status === err.status && (!h.detail || h.detail.test(err.detail)))?.hint;
    hint = typeof found === 'function' ? found(view) : found;
    if (err.status >= 500 && err.requestId) requestId = err.requestId;
  } else if (err instanceof TransportError && err.code === 'ECONNREFUSED') {
    hint = 'is `service serve` running there? set --url or SERVICE_URL';
  }
  return { message: asInvoked(message, program), fields, hint: hint === undefined ? undefined : asInvoked(hint, program), status, requestId };
}

/**
 * `error: <message>` on stderr, with field problems, a hint and the request id where they
 * help; with --json one JSON object instead, so a CI step can parse its failures too:
 * `{"error": {"message", "exit_code", "status"?, "fields"?, "hint"?, "request_id"?}}`.
 */
export function printError(io: Io, err: unknown, view: ErrorView = {}): void {
  if (view.json) {
    io.stderr.write(`${JSON.stringify({ error: errorObject(err, view, io.program) })}\n`);
    return;
  }
  const d = describe(err, view, io.program);
  if (view.subject !== undefined) d.message = `${view.subject}: ${d.message}`;
  const red = terminalColor(io.stderr.isTTY === true && !io.env.noColor).red;
  const lines = [`${red('error:')} ${d.message}`, ...d.fields.map((f) => `  ${f.name}: ${f.message}`)];
  if (d.hint) lines.push(`  hint: ${d.hint}`);
  if (d.requestId) lines.push(`  request id: ${d.requestId}`);
  // The message and fields are often the server's text: escaped for the terminal.
  io.stderr.write(`${forTerminal(lines.join('\n'))}\n`);
}

/**
 * The JSON form of an error: `{message, exit_code, status?, fields?, hint?, request_id?}`, as
 * printed with --json and as written inline for a failed line of a --batch run.
 */
export function errorObject(err: unknown, view: ErrorView = {}, program?: string): Record<string, unknown> {
  const d = describe(err, view, program);
  const error: Record<string, unknown> = { message: view.subject === undefined ? d.message : `${view.subject}: ${d.message}`, exit_code: exitCodeFor(err) };
  if (d.status !== undefined) error.status = d.status;
  if (d.fields.length > 0) error.fields = d.fields;
  if (d.hint) error.hint = d.hint;
  if (d.requestId) error.request_id = d.requestId;
  return error;
}
