import type { Command } from 'commander';
import { action } from './shared/context.js';
import { addAsyncOptions, viaJobWhenAsked, type AsyncOptionValues } from './shared/async-jobs.js';
import { addClientOptions, integerIn, withClient, type ClientOptionValues } from './shared/options.js';
import { snippet, table } from './shared/output.js';

interface ListOptions extends ClientOptionValues {
  taskType?: string;
  limit?: number;
  offset?: number;
}

interface AnalyzeOptions extends ClientOptionValues {
  minCount?: number;
}

export function register(program: Command): void {
  const group = program
    .command('feedback')
    .description('recurring quality issues collected from evaluations (list, decay, analyze)');

  const list = group
    .command('list', { isDefault: true })
    .description('top recurring quality issues (reported at least twice)')
    .option('--task-type <text>', 'only issues whose text or tasks mention this')
    .option('--limit <n>', 'issues to show, 1 to 100 (server default 10)', integerIn(1, 100))
    .option('--offset <n>', 'skip this many issues (paging)', integerIn(0, 10_000));
  addClientOptions(list);
  list.action(action(async (opts: ListOptions, command: Command) => {
    return withClient(opts, command, async (client, out) => {
      const res = await client.llm.feedback({ task_type: opts.taskType, limit: opts.limit, offset: opts.offset });
      out.result(res, () => {
        if (res.feedback.length === 0) return 'no recurring issues';
        const rows = res.feedback.map((f) => [String(f.count), f.score.toFixed(2), f.last_seen.slice(0, 10), snippet(f.text, 80)]);
        const lines = [table(['count', 'score', 'last seen', 'issue'], rows, out.color)];
        if (res.has_more && res.next_offset !== null) lines.push(out.color.dim(`more issues: --offset ${res.next_offset}`));
        return lines.join('\n');
      });
    });
  }));

  const decay = group.command('decay').description('decay issue scores (x0.9 per week) and prune faded ones');
  addClientOptions(decay);
  addAsyncOptions(decay);
  decay.action(action(async (opts: ClientOptionValues & AsyncOptionValues, command: Command) => {
    return withClient(opts, command, async (client, out) => {
      const res = await viaJobWhenAsked(opts, client, out, { operation: 'feedback_decay' },
        () => client.llm.decayFeedback());
      if (res === undefined) return;
      out.result(res, () => `decayed ${res.decayed} issues, pruned ${res.pruned}`);
    });
  }));

  const analyze = group
    .command('analyze')
    .description('(experimental) group issues worded differently but meaning the same (analyze-failures)')
    .option('--min-count <n>', 'only issues reported at least this often (server default 1)', integerIn(1, 1_000_000));
  addClientOptions(analyze);
  analyze.action(action(async (opts: AnalyzeOptions, command: Command) => {
    return withClient(opts, command, async (client, out) => {
      const res = await client.llm.analyzeFailures({ min_count: opts.minCount });
      out.result(res, () => {
        if (res.clusters.length === 0) return 'no failures recorded';
        return res.clusters
          .map((cl, i) => [
            `${out.color.bold(`${i + 1}. ${cl.representative}`)}  (reported ${cl.total_count}x, avg score ${cl.avg_score.toFixed(2)})`,
            ...cl.members.slice(1).map((m) => `     ~ ${m}`),
          ].join('\n'))
          .join('\n');
      });
    });
  }));
}
