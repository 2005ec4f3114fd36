import { Option, type Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import type { RecallMatch, RecallResponse } from '../src/client/index.js';
import { explainLine, tierPolicyLine } from '../src/core/recall-explain.js';
import { CLASSIFICATIONS, SOURCES, type Classification, type Source } from '../src/core/types.js';
import { action, ioOf } from './shared/context.js';
import { readTextArg } from './shared/input.js';
import { addClientOptions, finiteNumber, wholeNumber, withClient, type ClientOptionValues } from './shared/options.js';
import { snippet, table } from './shared/output.js';

interface RecallOptions extends ClientOptionValues {
  limit?: number;
  offset?: number;
  dedupe: boolean;
  evalWeighted: boolean;
  classification?: Classification;
  source?: Source;
  minScore?: number;
  readonly?: boolean;
  verify?: boolean;
  recencyWeight?: number;
  recencyHalfLife?: number;
  explain?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('recall')
    .description('find stored patterns similar to a task')
    .argument('<task>', 'the task: literal text, - for stdin, @file to read a file')
    .option('--limit <n>', 'matches to return, 1 to 50 (server default 5)', wholeNumber)
    .option('--offset <n>', 'skip this many matches (paging)', wholeNumber)
    .option('--no-dedupe', 'keep near-duplicate tasks instead of only the best of each group')
    .option('--no-eval-weighted', 'rank by raw similarity, ignoring eval history')
    .addOption(new Option('--classification <level>', 'only patterns with this classification').choices(CLASSIFICATIONS))
    .addOption(new Option('--source <source>', 'only patterns from this source').choices(SOURCES))
    .option('--min-score <score>', 'only patterns whose success score is at least this (0-10)', finiteNumber)
    .option('--readonly', 'do not count the matches as reuses')
    .option('--explain', "show each match's score parts (cosine, centred cosine, BM25, factors, tier rule) and the tier policy")
    .option('--verify', "ask the server's LLM whether each reusable match really fits (it can only lower a tier)")
    .option('--recency-weight <w>', 'favour recently learned or updated patterns, 0 (off, default) to 1', finiteNumber)
    .option('--recency-half-life <days>', 'age at which recency halves a score, in days (default 30)', finiteNumber);
  addClientOptions(cmd);

  cmd.action(action(async (taskArg: string, opts: RecallOptions, command: Command) => {
    const task = await readTextArg(taskArg, ioOf(command).stdin, 'task');
    return withClient(opts, command, async (client, out) => {
      const res = await out.withSpinner('recalling…', () => client.recall({
        task,
        limit: opts.limit,
        offset: opts.offset,
        deduplicate: opts.dedupe,
        eval_weighted: opts.evalWeighted,
        classification: opts.classification,
        source: opts.source,
        min_score: opts.minScore,
        readonly: opts.readonly === true ? true : undefined,
        verify: opts.verify === true ? true : undefined,
        explain: opts.explain === true ? true : undefined,
        recency_weight: opts.recencyWeight,
        recency_half_life_days: opts.recencyHalfLife,
      }));
      for (const warning of res.warnings ?? []) out.note(`warning: ${warning}`);
      out.result(res, () => renderRecall(res, opts.offset ?? 0, out.color));
    });
  }));
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
    snippet(m.pattern.task),
  ]);
  const verified = res.matches.some((m) => m.verification !== undefined);
  if (verified) {
    // Verified recalls add the LLM's verdict; '-' where a match was not verified.
    res.matches.forEach((m, i) => rows[i].splice(4, 0, m.verification ? m.verification.verdict : '-'));
  }
  const headers = verified ? ['rank', 'score', 'similarity', 'tier', 'verdict', 'key', 'task'] : ['rank', 'score', 'similarity', 'tier', 'key', 'task'];
  const lines = [table(headers, rows, c)];
  if (res.tier_policy) {
    res.matches.forEach((m, i) => {
      if (m.explain) lines.push(c.dim(`${offset + i + 1}: ${explainLine(m.explain)}`));
    });
    lines.push(`tier policy ${tierPolicyLine(res.tier_policy)}`);
  }
  if (res.has_more && res.next_offset !== null) lines.push(c.dim(`more matches: --offset ${res.next_offset}`));
  return lines.join('\n');
}
