import { Argument, type Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import type { EventsResponse, RollupResponse } from '../src/client/index.js';
import { ROLLUP_WINDOWS, type RollupWindow } from '../src/core/roi.js';
import { action } from './shared/context.js';
import { addAsyncOptions, viaJobWhenAsked, type AsyncOptionValues } from './shared/async-jobs.js';
import { addClientOptions, finiteNumber, integerIn, withClient, type ClientOptionValues } from './shared/options.js';
import { table } from './shared/output.js';

interface EventsOptions extends ClientOptionValues {
  limit?: number;
  since?: number;
}

const windowArgument = () => new Argument('<window>', 'rollup window').choices(ROLLUP_WINDOWS);

export function register(program: Command): void {
  const group = program.command('analytics').description('ROI rollups and raw ROI events of the project');

  const rollup = group
    .command('rollup')
    .description('compute the rollup of the window ending now (and store it)')
    .addArgument(windowArgument());
  addClientOptions(rollup);
  addAsyncOptions(rollup);
  rollup.action(action(async (window: RollupWindow, opts: ClientOptionValues & AsyncOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const res = await viaJobWhenAsked(opts, client, out, { operation: 'analytics_rollup', body: { window } },
        () => out.withSpinner('computing…', () => client.analytics.rollup({ window })));
      if (res === undefined) return;
      out.result(res, () => renderRollup(res, out.color));
    })));

  const get = group
    .command('get')
    .description('show the last computed rollup of a window (exit 4 when none yet)')
    .addArgument(windowArgument());
  addClientOptions(get);
  get.action(action(async (window: RollupWindow, opts: ClientOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const res = await client.analytics.getRollup(window);
      out.result(res, () => renderRollup(res, out.color));
    })));

  const events = group
    .command('events')
    .description('raw ROI events (metadata only), newest first')
    .option('--limit <n>', 'events to show, 1 to 1000 (server default 100)', integerIn(1, 1000))
    .option('--since <unix-seconds>', 'only events at or after this Unix time', finiteNumber);
  addClientOptions(events);
  events.action(action(async (opts: EventsOptions, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const res = await client.analytics.events({ limit: opts.limit, since: opts.since });
      out.result(res, () => renderEvents(res, out.color));
    })));
}

const fixed = (x: number | null, digits = 2) => (x === null ? '-' : x.toFixed(digits));
const percent = (x: number | null) => (x === null ? '-' : `${(x * 100).toFixed(1)}%`);

export function renderRollup(r: RollupResponse, c: ChalkInstance): string {
  const t = r.recall.tiers;
  return [
    `${c.bold(`${r.window} rollup`)}  ${r.since} → ${r.computed_at}  (${r.event_count} events)`,
    `ROI score  ${c.bold(r.roi_score.toFixed(2))} / 10`,
    `recall     ${r.recall.count} calls, ${r.recall.hits} reusable (${percent(r.recall.hit_rate)}), ` +
      `mean best similarity ${fixed(r.recall.mean_best_similarity, 3)}`,
    `           duplicate ${t.duplicate}, adapt ${t.adapt}, fresh ${t.fresh}, no match ${t.none}`,
    `learn      ${r.learn.count} calls, ${r.learn.stored} stored, avg eval ${fixed(r.learn.avg_eval_score)}, ` +
      `success ${percent(r.learn.success_rate)}`,
    `latency    p50 ${fixed(r.percentiles.p50, 1)} ms, p95 ${fixed(r.percentiles.p95, 1)} ms, ` +
      `p99 ${fixed(r.percentiles.p99, 1)} ms (${r.percentiles.samples} samples)`,
  ].join('\n');
}

function renderEvents(res: EventsResponse, c: ChalkInstance): string {
  if (res.count === 0) return 'no events';
  const rows = res.events.map((e) => [
    e.at,
    e.kind,
    e.kind === 'learn' ? `eval ${fixed(e.eval_score ?? null, 1)}${e.stored ? ', stored' : ''}` : `${e.best_tier ?? 'no match'} ${fixed(e.best_similarity ?? null, 3)}`,
    e.latency_ms === undefined ? '-' : `${e.latency_ms} ms`,
  ]);
  return table(['at', 'kind', 'detail', 'latency'], rows, c);
}
