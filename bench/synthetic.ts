/**
 * Deterministic synthetic agent runs for the benchmark. Tasks are assembled from word lists
 * (action, subject, source, language, constraint, purpose), so they are varied like real
 * tasks, share vocabulary the way real tasks do, and are never identical. The same seed
 * always yields the same runs.
 */

const ACTIONS = [
  'parse', 'validate', 'sort', 'deduplicate', 'compress', 'encrypt', 'resize', 'paginate', 'cache',
  'stream', 'merge', 'normalize', 'tokenize', 'schedule', 'index', 'serialize', 'migrate', 'monitor',
  'summarize', 'export', 'import', 'aggregate', 'redact', 'archive', 'translate', 'score',
];
const SUBJECTS = [
  'CSV files', 'JSON payloads', 'user records', 'invoice PDFs', 'log lines', 'image thumbnails',
  'webhook events', 'database rows', 'API responses', 'config files', 'email addresses', 'time series',
  'audio clips', 'shopping carts', 'git commits', 'sensor readings', 'support tickets', 'product reviews',
  'payment transactions', 'markdown documents', 'calendar invites', 'geo coordinates',
];
const ORIGINS = [
  'from an S3 bucket', 'from a Postgres table', 'from a REST endpoint', 'from a Kafka topic',
  'from the local disk', 'from a message queue', 'from an FTP server', 'from a Redis cache',
  'from a spreadsheet upload', 'from a GraphQL API', 'from a mobile client', 'from a cron export',
];
const LANGUAGES = [
  'in Python', 'in TypeScript', 'in Go', 'in Rust', 'in Java', 'with a shell script', 'in Ruby',
  'in Kotlin', 'in C#', 'in Elixir',
];
const CONSTRAINTS = [
  'with retries and exponential backoff', 'under 100 ms per item', 'using bounded memory',
  'with structured logging', 'idempotently', 'in parallel with four workers', 'with unit tests',
  'behind a feature flag', 'with progress reporting', 'handling malformed input gracefully',
  'without external dependencies', 'with a dry run option', 'using a streaming parser',
];
const PURPOSES = [
  'for the billing service', 'for a nightly report', 'for the analytics dashboard',
  'before loading into the warehouse', 'for the mobile app', 'for fraud detection',
  'for the audit trail', 'for customer onboarding', 'for the search index', 'for a weekly digest',
];

/** mulberry32: a tiny, fast, well-spread 32-bit PRNG; enough for benchmark data. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

export interface SyntheticRun {
  task: string;
  code: string;
  output: string;
  eval_score: number;
}

/** Draws one task text from a seeded random source. */
export type TaskSource = (random: () => number) => string;

/** Word lists allow about 10 million distinct tasks; far more than any benchmark size. */
export const templatedTask: TaskSource = (random) => {
  const action = pick(random, ACTIONS);
  // Optional parts vary the length, as real tasks do.
  const parts = [
    action[0].toUpperCase() + action.slice(1),
    pick(random, SUBJECTS),
    pick(random, ORIGINS),
    pick(random, LANGUAGES),
    random() < 0.7 ? pick(random, CONSTRAINTS) : '',
    random() < 0.6 ? pick(random, PURPOSES) : '',
  ];
  return parts.filter(Boolean).join(' ');
};

function codeFor(task: string, random: () => number): string {
  const name = task.split(' ').slice(0, 3).map((w) => w.replace(/[^A-Za-z0-9]/g, '')).join('_').toLowerCase();
  const steps = 2 + Math.floor(random() * 6);
  const body = Array.from({ length: steps }, (_, i) => `  result = step_${i}(result)  # ${task.length + i}`);
  return [`def ${name}(source):`, '  result = load(source)', ...body, '  return result'].join('\n');
}

/** `count` distinct runs for `seed`; indexes are stable (run i never depends on `count`). */
export function syntheticRuns(seed: number, count: number, taskFrom: TaskSource = templatedTask): SyntheticRun[] {
  const runs: SyntheticRun[] = [];
  for (const run of syntheticRunStream(seed, taskFrom)) {
    if (runs.length >= count) break;
    runs.push(run);
  }
  return runs;
}

/** The same runs one at a time (a million of them need not be held at once). */
export function* syntheticRunStream(seed: number, taskFrom: TaskSource = templatedTask): Generator<SyntheticRun> {
  const random = seededRandom(seed);
  const seen = new Set<string>();
  for (;;) {
    const task = taskFrom(random);
    if (seen.has(task)) continue;
    seen.add(task);
    yield {
      task,
      code: codeFor(task, random),
      output: `processed ${1 + Math.floor(random() * 5000)} items`,
      eval_score: Math.round((5 + random() * 5) * 10) / 10,
    };
  }
}

/** Recall queries: new task texts from the same vocabulary (similar to, not copies of, stored ones). */
export function syntheticQueries(seed: number, count: number, avoid: ReadonlySet<string>, taskFrom: TaskSource = templatedTask): string[] {
  const random = seededRandom(seed);
  const queries = new Set<string>();
  while (queries.size < count) {
    const task = taskFrom(random);
    if (!avoid.has(task)) queries.add(task);
  }
  return [...queries];
}
