import { Option, type Command } from 'commander';
import { CLASSIFICATIONS, SOURCES } from '../src/core/vocabulary.js';
import { formatNumber } from '../src/core/output-numbers.js';
import { addYesOption, confirmDestructive, type YesOptionValues } from './shared/confirm.js';
import { action, ioOf } from './shared/context.js';
import { ExitCode } from './shared/exit-codes.js';
import { addExamples } from './shared/help.js';
import { addClientOptions, integerIn, numberIn, withClient, type ClientOptionValues } from './shared/options.js';
import { snippet, table } from './shared/output.js';

interface ListOptions extends ClientOptionValues {
  limit?: number;
  cursor?: string;
  classification?: (typeof CLASSIFICATIONS)[number];
  source?: (typeof SOURCES)[number];
  minScore?: number;
  maxScore?: number;
  updatedAfter?: string;
  updatedBefore?: string;
}

/** `service patterns list | get KEY | delete KEY`: the stored patterns, or one by its key. */
export function register(program: Command): void {
  const patterns = program.command('patterns').description('list the stored patterns, or show or delete one by its key (patterns/<id>)');

  const list = patterns
    .command('list')
    .description('stored patterns, newest update first, one page at a time (--cursor for the next)')
    .option('--limit <n>', 'patterns per page, 1 to 100 (server default 20)', integerIn(1, 100))
    .option('--cursor <cursor>', 'continue after the page that printed this cursor')
    .addOption(new Option('--classification <level>', 'only this classification').choices(CLASSIFICATIONS))
    .addOption(new Option('--source <source>', 'only patterns from this source').choices(SOURCES))
    .option('--min-score <n>', 'success score at least this (0-10)', numberIn(0, 10))
    .option('--max-score <n>', 'success score at most this (0-10)', numberIn(0, 10))
    .option('--updated-after <time>', 'updated after this ISO date-time, e.g. 2026-01-31T00:00:00Z')
    .option('--updated-before <time>', 'updated before this ISO date-time');
  addClientOptions(list);
  addExamples(list, ['service patterns list', 'service patterns list --min-score 8 --limit 50 --json | jq -r \'.patterns[].key\'']);
  list.action(action(async (opts: ListOptions, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const page = await client.listPatterns({
        limit: opts.limit, cursor: opts.cursor, classification: opts.classification, source: opts.source,
        min_score: opts.minScore, max_score: opts.maxScore, updated_after: opts.updatedAfter, updated_before: opts.updatedBefore,
      });
      out.result(page, () => {
        if (page.patterns.length === 0) return 'no patterns';
        const rows = page.patterns.map((p) => [p.key, formatNumber(p.success_score), `${p.reuse_count}x`, p.updated_at, snippet(p.task, 50)]);
        const lines = [table(['key', 'success', 'reused', 'updated', 'task'], rows, out.color)];
        if (page.next_cursor) lines.push('', `more: ${out.program} patterns list --cursor ${page.next_cursor}`);
        return lines.join('\n');
      });
    })));

  const get = patterns
    .command('get')
    .description('show a stored pattern with all its fields')
    .argument('<key>', 'the pattern key, e.g. patterns/0190b5c2a1f3 (from `service recall`)');
  addClientOptions(get);
  addExamples(get, ['service patterns get patterns/0190b5c2a1f3', 'service patterns get patterns/0190b5c2a1f3 --json | jq -r .code']);
  get.action(action(async (key: string, opts: ClientOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const p = await client.getPattern(key);
      out.result(p, () => {
        const c = out.color;
        return [
          `${c.bold(p.key)}  success ${p.success_score}  eval ${p.eval_score}  reused ${p.reuse_count}x  ${p.classification}  source ${p.source}`,
          `updated ${p.updated_at}${p.expires_at ? `  expires ${p.expires_at}` : ''}${p.redacted ? '  (redacted)' : ''}`,
          '',
          c.bold('task'),
          p.task,
          '',
          c.bold('code'),
          p.code,
          ...(p.output ? ['', c.bold('output'), p.output] : []),
        ].join('\n');
      });
    })));

  const del = patterns
    .command('delete')
    .description('permanently delete a pattern with its vector, eval history and tags (admin role)')
    .argument('<key>', 'the pattern key, e.g. patterns/0190b5c2a1f3');
  addYesOption(del);
  addClientOptions(del);
  addExamples(del, ['service patterns delete patterns/0190b5c2a1f3', 'service patterns delete patterns/0190b5c2a1f3 --yes   # in a script']);
  del.action(action(async (key: string, opts: ClientOptionValues & YesOptionValues, command: Command) => {
    if (!(await confirmDestructive(ioOf(command), opts, { action: `delete ${key}`, question: `Permanently delete ${key}?` }))) return ExitCode.FAILURE;
    return withClient(opts, command, async (client, out) => {
      const res = await client.deletePattern(key);
      out.result(res, () => `deleted ${res.pattern_key}`);
    });
  }));
}
