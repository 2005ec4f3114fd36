import { setTimeout as delay } from 'node:timers/promises';
import type { ChalkInstance } from 'chalk';
import type { Io, OutStream } from './context.js';
import { outputNumberReplacer } from '../../src/core/output-numbers.js';
import { asInvoked } from './package-info.js';
import { displayWidth, escapeControls, forTerminal, terminalColor } from './terminal-text.js';


/**
 * How a command talks back. Results go to stdout: a human rendering on a terminal, JSON with
 * --json or whenever stdout is piped (so `service recall x | jq` just works). Notes, spinners,
 * progress and errors go to stderr and never pollute the JSON. Colour only on a TTY and never
 * with NO_COLOR; spinners only when stderr is a TTY. Everything written for a person passes
 * forTerminal() here, so no text from the service can drive the terminal (terminal-text.ts);
 * JSON is written exactly as received.
 */
export interface Output {
  /** True when results are printed as JSON. */
  readonly json: boolean;
  /** The name the program was called by (`service` or `agent-memory`), for suggested command lines. */
  readonly program: string;
  /** `text` naming commands (`service jobs wait …` in backticks) as the program was called. */
  asInvoked(text: string): string;
  /** Colours for stdout text (no-ops off a TTY or with NO_COLOR). */
  readonly color: ChalkInstance;
  /** Prints a command's result: JSON, or the human rendering. */
  result(data: unknown, human: () => string): void;
  /** A line on stdout (for a person: controls escaped). */
  line(text?: string): void;
  /** A side note on stderr (human mode only, so JSON consumers see nothing extra). */
  note(text: string): void;
  /** A spinner on stderr while `work` runs (only drawn on a TTY). */
  withSpinner<T>(text: string, work: () => Promise<T>): Promise<T>;
  /**
   * A spinner whose text the caller updates (batch progress); nothing off a TTY. While it
   * runs, pauses() show inside it instead of drawing over it.
   */
  startSpinner(text: string): Promise<{ update(text: string): void; stop(): void }>;
  /**
   * Waits `ms` and tells the person why: inside the running spinner on a terminal, else one
   * line on stderr per wait (CI logs show every wait).
   */
  pause(reason: string, ms: number): Promise<void>;
  /** Rewrites one progress line on a TTY stderr; silent elsewhere. Finish with progressDone(). */
  progress(text: string): void;
  progressDone(): void;
}

export function colorFor(io: Io, stream: OutStream): ChalkInstance {
  return terminalColor(stream.isTTY === true && !io.env.noColor);
}

export function createOutput(io: Io, opts: { json?: boolean; format?: 'table' | 'json' } = {}): Output {
  // --format decides whatever stdout is; otherwise JSON when piped (or with --json).
  const json = opts.json === true || opts.format === 'json' || (opts.format === undefined && io.stdout.isTTY !== true);
  const color = colorFor(io, io.stdout);
  const stderrTTY = io.stderr.isTTY === true && !io.env.ci;
  // ora divides by the terminal width: a pseudo-terminal reporting 0 columns (no size set,
  // e.g. under `script` in CI) would make it loop forever, so such terminals get no spinner.
  const spinnerOk = stderrTTY && (io.stderr.columns ?? 0) > 0;
  let progressShown = false;
  // The spinner on screen (at most one), so pauses can show in it instead of over it.
  let active: { text: string } | null = null;
  const newSpinner = async (text: string) => {
    // Loaded only when a spinner is drawn: piped runs (scripts, loops) never pay for it.
    const { default: ora } = await import('ora');
    return ora({ text: forTerminal(text), stream: io.stderr as NodeJS.WritableStream, discardStdin: false, color: io.env.noColor ? false : 'cyan' }).start();
  };

  return {
    json,
    program: io.program ?? 'service',
    asInvoked: (text) => asInvoked(text, io.program),
    color,
    result(data, human) {
      io.stdout.write(json ? `${JSON.stringify(data, outputNumberReplacer, 2)}\n` : `${forTerminal(human())}\n`);
    },
    line(text = '') {
      io.stdout.write(`${forTerminal(text)}\n`);
    },
    note(text) {
      if (!json) io.stderr.write(`${forTerminal(text)}\n`);
    },
    async withSpinner(text, work) {
      if (!spinnerOk || active) return work();
      const spinner = await newSpinner(text);
      active = spinner;
      try {
        return await work();
      } finally {
        spinner.stop();
        active = null;
      }
    },
    async startSpinner(text) {
      if (!spinnerOk || active) return { update() {}, stop() {} };
      const spinner = await newSpinner(text);
      active = spinner;
      return {
        update: (next) => { spinner.text = forTerminal(next); },
        stop: () => {
          spinner.stop();
          active = null;
        },
      };
    },
    async pause(why, ms) {
      const reason = forTerminal(why);
      const spinner = active;
      if (spinner) {
        const before = spinner.text;
        spinner.text = `${before} (${reason})`;
        await delay(ms);
        if (spinner.text === `${before} (${reason})`) spinner.text = before;
        return;
      }
      io.stderr.write(`${reason}\n`);
      await delay(ms);
    },
    progress(text) {
      if (!stderrTTY) return;
      io.stderr.write(`\r\x1b[2K${forTerminal(text)}`);
      progressShown = true;
    },
    progressDone() {
      if (progressShown) io.stderr.write('\n');
      progressShown = false;
    },
  };
}

export { printError, type ErrorView } from './print-error.js';

/**
 * A plain left-aligned table; cells may carry colour (from Output.color). Columns are as wide
 * as their cells will show once written (escaped controls included, colour codes not).
 */
export function table(headers: string[], rows: string[][], color?: ChalkInstance): string {
  const widths = headers.map((h, i) => Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r[i] ?? ''))));
  const render = (cells: string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(widths[i] - displayWidth(c)))).join('  ').trimEnd();
  const head = render(headers);
  return [color ? color.bold(head) : head, ...rows.map(render)].join('\n');
}

/** First line of `text`, whitespace collapsed, cut to `max` characters with an ellipsis. */
export function snippet(text: string, max = 60): string {
  // Escaped first, so the cut counts what the terminal will show.
  const oneLine = escapeControls(text).replace(/\s+/g, ' ').trim();
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}
