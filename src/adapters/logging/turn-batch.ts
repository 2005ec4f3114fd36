/**
 * Log lines written during one turn of the event loop, written out together at its end: one
 * write instead of one per line. Under load a server ends several requests per turn, each with
 * its log line, and each write to a pipe (stderr under a supervisor or a container runtime) is
 * a system call on the main thread: 2.4 % of a loaded JSON recall server's main thread went to
 * them. Order is kept. What is pending is written when the process exits (process.exit, the
 * end of the loop, a fatal error's exit), so a crash's last lines are not lost; only a kill
 * that gives the process no exit at all (SIGKILL) can lose the current turn's lines.
 */
export class TurnBatch {
  private pending: string[] = [];
  private scheduled = false;

  constructor(private readonly target: { write(text: string): unknown }) {}

  write(line: string): void {
    this.pending.push(line);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes whatever is pending now, in one write. */
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const text = this.pending.length === 1 ? this.pending[0] : this.pending.join('');
    this.pending = [];
    this.target.write(text);
  }
}

let stderrBatch: TurnBatch | null = null;

/** The process's one batch in front of stderr (every logger of the process shares it). */
export function batchedStderr(): TurnBatch {
  if (!stderrBatch) {
    const batch = new TurnBatch(process.stderr);
    // stderr writes are synchronous for files, pipes and terminals, so this lands before exit.
    process.on('exit', () => batch.flush());
    stderrBatch = batch;
  }
  return stderrBatch;
}
