import { Option, type Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import type { RecallMatch, RecallRequest, RecallResponse, RetryWait, ServiceClient } from '../src/client/index.js';
import { explainLine, lessonLine, tierPolicyLine } from '../src/core/recall-explain.js';
import { CLASSIFICATIONS, SOURCES, type Classification, type Source } from '../src/core/types.js';
import { RECALL_BATCH_MAX } from '../src/core/vocabulary.js';
import { DEFAULT_MAX_BODY_SIZE } from '../src/config/http.js';
import { batchInput, maxLineBytesOption, numberedLines, parseObjectLine, runLines, type InputLine, type LineRequest } from './shared/batch-lines.js';
import { action, errorViewOf, ioOf, type Io } from './shared/context.js';
import { UsageError } from './shared/exit-codes.js';
import { readTextArg } from './shared/input.js';
import { addClientOptions, finiteNumber, integerIn, wholeNumber, withClient, type ClientOptionValues } from './shared/options.js';
import { snippet, table, type Output } from './shared/output.js';

interface RecallOptions extends ClientOptionValues {
  limit?: number;
  offset?: number;
  dedupe: boolean;
  evalWeighted: boolean;
  classification?: Classification;
  source?: Source;
  minScore?: number;
  countReuse?: boolean;
  verify?: boolean;
  recencyWeight?: number;
  recencyHalfLife?: number;
  batch?: string | true;
  concurrency: number;
  maxLineBytes: number;
  explain?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('recall')
    .description('find stored patterns similar to a task (read-only unless --count-reuse)')
    .argument('[task]', 'the task: literal text, - for stdin, @file to read a file (not with --batch)')
    .option('--limit <n>', 'matches to return, 1 to 50 (server default 5)', wholeNumber)
    .option('--offset <n>', 'skip this many matches (paging)', wholeNumber)
    .option('--no-dedupe', 'keep near-duplicate tasks instead of only the best of each group')
    .option('--no-eval-weighted', 'rank by raw similarity, ignoring eval history')
    .addOption(new Option('--classification <level>', 'only patterns with this classification').choices(CLASSIFICATIONS))
    .addOption(new Option('--source <source>', 'only patterns from this source').choices(SOURCES))
    .option('--min-score <score>', 'only patterns whose success score is at least this (0-10)', finiteNumber)
    .option('--count-reuse', 'count the reusable matches as reuses (reuse count + 1, success score + 0.1, ROI event); an agent that uses the answer passes this')
    // Read-only is the default; the flag says so explicitly (documented examples use it).
    .addOption(new Option('--readonly', 'do not count the matches as reuses (the default; the opposite of --count-reuse)').conflicts('countReuse'))
    .option('--explain', "show each match's score parts (cosine, centred cosine, BM25, factors, tier rule) and the tier policy")
    .option('--verify', "ask the server's LLM whether each reusable match really fits (it can only lower a tier)")
    .option('--recency-weight <w>', 'favour recently learned or updated patterns, 0 (off, default) to 1', finiteNumber)
    .option('--recency-half-life <days>', 'age at which recency halves a score, in days (default 30)', finiteNumber)
    .option('--batch [file]', 'recall every line of FILE (- or no value: stdin): a task per line, or a JSON object of recall fields; NDJSON out')
    .option('--concurrency <n>', 'lines recalled at the same time with --batch, 1 to 32', integerIn(1, 32), 4)
    .addOption(maxLineBytesOption());
  addClientOptions(cmd);

  cmd.action(action(async (taskArg: string | undefined, opts: RecallOptions, command: Command) => {
    const io = ioOf(command);
    if (opts.batch !== undefined) {
      if (taskArg !== undefined) throw new UsageError('--batch reads the tasks from the file (or stdin): drop the task argument');
      const input = await batchInput(opts.batch === true ? '-' : opts.batch, io);
      return withClient(
        opts, command,
        async (client, out) => recallBatch(client, out, numberedLines(input, { maxBytes: opts.maxLineBytes }), opts, command),
        { beforeWait: explainBatchWait(io) },
      );
    }
    if (taskArg === undefined) throw new UsageError("missing required argument 'task' (or use --batch FILE)");
    const task = await readTextArg(taskArg, io.stdin, 'task');
    return withClient(opts, command, async (client, out) => {
      const res = await out.withSpinner('recalling…', () => client.recall({ ...requestDefaults(opts), task }));
      for (const warning of res.warnings ?? []) out.note(`warning: ${warning}`);
      if (res.matches.length === 0 && (opts.offset ?? 0) === 0) await warnIfProjectEmpty(client, opts, command);
      out.result(res, () => renderRecall(res, opts.offset ?? 0, out.color));
    });
  }));
}

/** The request fields the flags set; a --batch line's own fields override them. */
function requestDefaults(opts: RecallOptions): Omit<RecallRequest, 'task'> {
  return {
    limit: opts.limit,
    offset: opts.offset,
    deduplicate: opts.dedupe,
    eval_weighted: opts.evalWeighted,
    classification: opts.classification,
    source: opts.source,
    min_score: opts.minScore,
    // Exploring from a shell must not change what is stored: counting is opt-in here, while
    // the HTTP API keeps the specification's default (a POST recall counts).
    readonly: opts.countReuse !== true,
    verify: opts.verify === true ? true : undefined,
    explain: opts.explain === true ? true : undefined,
    recency_weight: opts.recencyWeight,
    recency_half_life_days: opts.recencyHalfLife,
  };
}

/**
 * No match at all in a project named by --project (or SERVICE_PROJECT): a typo in the name
 * looks exactly like an empty project, so say when the project holds no pattern. Only the
 * caller's own scope is counted (GET /v1/metrics), nothing of any other project or tenant.
 */
async function warnIfProjectEmpty(client: ServiceClient, opts: RecallOptions, command: Command): Promise<void> {
  if (opts.project === undefined) return;
  const metrics = await client.metrics().catch(() => null);
  if (metrics === null || metrics.pattern_count > 0) return;
  const from = command.getOptionValueSource('project') === 'cli' ? '--project' : 'SERVICE_PROJECT';
  ioOf(command).stderr.write(
    `warning: project "${opts.project}" has no patterns: check the name given by ${from} (a project starts with its first learn or import)\n`,
  );
}

const RECALL_FIELDS = new Set([
  'task', 'limit', 'offset', 'deduplicate', 'eval_weighted', 'classification', 'source', 'min_score', 'readonly', 'verify',
  'recency_weight', 'recency_half_life_days',
]);

/** A batch line: plain text is the task; a `{…}` line is an object of recall fields (and an `id`). */
function recallLine(opts: RecallOptions) {
  const defaults = requestDefaults(opts);
  return (input: InputLine): LineRequest<RecallRequest> => {
    if (!input.text.trimStart().startsWith('{')) return { request: { ...defaults, task: input.text } };
    const { id, ...fields } = parseObjectLine(input.text);
    const unknown = Object.keys(fields).filter((k) => !RECALL_FIELDS.has(k));
    if (unknown.length > 0) throw new UsageError(`unknown field ${unknown.join(', ')} (recall fields: ${[...RECALL_FIELDS].join(', ')}, and id)`);
    return { id, request: { ...defaults, ...fields } as RecallRequest };
  };
}

/**
 * The lines go RECALL_BATCH_MAX at a time through POST /v1/recall/batch (+), one request per
 * group, each line answered as its own POST /v1/recall would be. A body stays under the
 * server's default size limit; a line too big for it goes alone (and is refused alone).
 */
async function recallBatch(client: ServiceClient, out: Output, lines: AsyncIterable<InputLine>, opts: RecallOptions, command: Command): Promise<number> {
  const spinner = await out.startSpinner('recalling…');
  try {
    return await runLines(ioOf(command), lines, {
      concurrency: opts.concurrency,
      view: errorViewOf(command),
      progress: { answered: (n) => spinner.update(`recalled ${n} line${n === 1 ? '' : 's'}…`) },
    }, recallLine(opts), {
      many: (requests) => client.recallBatch(requests),
      size: RECALL_BATCH_MAX,
      bytes: DEFAULT_MAX_BODY_SIZE - 1024,
    });
  } finally {
    spinner.stop();
  }
}

/** Once per run, before the first wait the server's rate limit imposes: why the batch slows down. */
function explainBatchWait(io: Io): (wait: RetryWait) => void {
  let told = false;
  return (wait) => {
    if (told || wait.status !== 429) return;
    told = true;
    io.stderr.write(
      `note: the server's rate limit slows this batch: each request of up to ${RECALL_BATCH_MAX} lines counts as one expensive request ` +
        '(SERVICE_RATE_LIMIT_EXPENSIVE a minute on the server, 10 by default); the rest waits for its window\n',
    );
  };
}

const TIER_COLOURS: Record<RecallMatch['reuse_tier'], (c: ChalkInstance) => ChalkInstance> = {
  duplicate: (c) => c.green,
  adapt: (c) => c.yellow,
  fresh: (c) => c.dim,
};

export function renderRecall(res: RecallResponse, offset: number, c: ChalkInstance): string {
  if (res.matches.length === 0) return offset > 0 ? 'no more matches' : 'no matches';
  const rows = res.matches.map((m, i) => [
    String(offset + i + 1),
    m.score.toFixed(3),
    m.similarity.toFixed(3),
    TIER_COLOURS[m.reuse_tier](c)(m.reuse_tier),
    m.pattern_key,
    snippet(m.pattern.task, 50),
    // The code's first line is usually enough to tell matches apart; `patterns get` shows it all.
    snippet(m.pattern.code, 40),
  ]);
  const verified = res.matches.some((m) => m.verification !== undefined);
  if (verified) {
    // Verified recalls add the LLM's verdict; '-' where a match was not verified.
    res.matches.forEach((m, i) => rows[i].splice(4, 0, m.verification ? m.verification.verdict : '-'));
  }
  const headers = verified
    ? ['rank', 'score', 'similarity', 'tier', 'verdict', 'key', 'task', 'code']
    : ['rank', 'score', 'similarity', 'tier', 'key', 'task', 'code'];
  const lines = [table(headers, rows, c)];
  res.matches.forEach((m, i) => {
    for (const l of m.lessons ?? []) lines.push(`${offset + i + 1}: lesson: ${lessonLine(l)}`);
  });
  if (res.tier_policy) {
    res.matches.forEach((m, i) => {
      if (m.explain) lines.push(c.dim(`${offset + i + 1}: ${explainLine(m.explain)}`));
    });
    lines.push(`tier policy ${tierPolicyLine(res.tier_policy)}`);
  }
  if (res.has_more && res.next_offset !== null) lines.push(c.dim(`more matches: --offset ${res.next_offset}`));
  // The id outcomes are reported against (`service outcome`); older servers answer none.
  if (res.recall_id) lines.push(c.dim(`recall_id ${res.recall_id} (after reusing a match: service outcome ${res.recall_id} KEY --passed|--failed)`));
  return lines.join('\n');
}
