/**
 * Concurrent learn / recall / async-import traffic against a running server, for the fault
 * tests: every answer is recorded (status, Retry-After, or the network error instead), so a
 * test can say that nothing but 2xx and 503 came back and wait until 2xx resumes.
 */
export interface Answer {
  kind: 'learn' | 'recall' | 'import' | 'job';
  /** HTTP status, or 0 when no answer came (connection refused or reset). */
  status: number;
  retryAfter: string | null;
  code: string | null;
  error: string | null;
  at: number;
}

export interface Load {
  readonly answers: Answer[];
  /** Job ids accepted by async imports. */
  readonly jobs: string[];
  /** Resolves once `count` more 2xx answers of every kind in `kinds` arrived after this call. */
  successesAfterNow(count: number, kinds?: Answer['kind'][], timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function startLoad(
  baseUrl: string,
  headers: Record<string, string>,
  opts: { concurrency?: number; /** The server's exit: waiting for 2xx fails at once when it comes. */ stopOnExit?: Promise<unknown> } = {},
): Load {
  const answers: Answer[] = [];
  const jobs: string[] = [];
  const waiters = new Set<() => void>();
  let stopped = false;
  let serverExited: string | null = null;
  let n = 0;
  void opts.stopOnExit?.then((exit) => {
    serverExited = `the server exited (${JSON.stringify(exit)})`;
    for (const w of [...waiters]) w();
  });

  const send = async (kind: Answer['kind'], method: string, path: string, body?: unknown, extra: Record<string, string> = {}) => {
    const at = Date.now();
    try {
      const res = await fetch(baseUrl + path, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...extra },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: Record<string, unknown> | null = null;
      try {
        parsed = JSON.parse(text) as Record<string, unknown>;
      } catch {
        parsed = null;
      }
      answers.push({ kind, status: res.status, retryAfter: res.headers.get('retry-after'), code: (parsed?.code as string) ?? null, error: null, at });
      for (const w of [...waiters]) w();
      return { status: res.status, body: parsed };
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      answers.push({ kind, status: 0, retryAfter: null, code: null, error: cause?.code ?? cause?.message ?? String(err), at });
      return { status: 0, body: null };
    }
  };

  const loops: Promise<void>[] = [];
  const loop = async (step: () => Promise<unknown>) => {
    while (!stopped) {
      const before = answers.length;
      await step();
      // Yield so the test's own timers and the server's children get the CPU on a busy machine;
      // back off while nothing answers at all (a dead server must not be hammered).
      await sleep(answers.slice(before).some((a) => a.status === 0) ? 100 : 5);
    }
  };
  const concurrency = opts.concurrency ?? 2;
  for (let i = 0; i < concurrency; i++) {
    loops.push(loop(() => {
      const id = ++n;
      return send('learn', 'POST', '/v1/learn', { task: `Parse the log file number ${id} into columns`, code: `parse(${id})`, eval_score: 7 });
    }));
    loops.push(loop(() => send('recall', 'POST', '/v1/recall', { task: `Parse the log file number ${n} into columns` })));
  }
  loops.push(loop(async () => {
    const id = ++n;
    const records = [0, 1, 2].map((i) => ({ task: `Load the archive ${id}-${i} into the warehouse`, code: `load(${id}, ${i})`, eval_score: 6 }));
    const res = await send('import', 'POST', '/v1/import', { records }, { prefer: 'respond-async' });
    const jobId = res.body?.job_id;
    if (res.status === 202 && typeof jobId === 'string') {
      jobs.push(jobId);
      await send('job', 'GET', `/v1/jobs/${jobId}`);
    }
  }));

  return {
    answers,
    jobs,
    successesAfterNow(count, kinds = ['learn', 'recall', 'import'], timeoutMs = 60_000) {
      const from = answers.length;
      return new Promise((resolve, reject) => {
        const check = () => {
          if (serverExited) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`${serverExited} while waiting for 2xx; since then: ${JSON.stringify(summarise(answers.slice(from)))}`));
            return;
          }
          const fresh = answers.slice(from);
          const ok = kinds.every((k) => fresh.filter((a) => a.kind === k && a.status >= 200 && a.status < 300).length >= count);
          if (!ok) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const fresh = answers.slice(from);
          reject(new Error(`2xx did not resume within ${timeoutMs} ms; since then: ${JSON.stringify(summarise(fresh))}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** Counts by kind and status (or error), for messages. */
export function summarise(answers: Answer[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const key = `${a.kind}:${a.status || a.error}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}
