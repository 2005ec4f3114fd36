import { stat } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import { loadConfig } from '../src/config/index.js';
import { CalibrationSetFile } from '../src/contracts/calibration.js';
import type { Distribution, Share, TierOutcome } from '../src/core/calibration.js';
import type { CalibrationReport } from '../src/services/calibrate.js';
import { action, ioOf } from './shared/context.js';
import { UsageError } from './shared/exit-codes.js';
import { readTextFile } from './shared/input.js';
import { createOutput } from './shared/output.js';
import { formatOption, integerIn } from './shared/options.js';

interface CalibrateOptions {
  rate: number;
  stored?: number;
  write?: string;
  json?: boolean;
  format?: 'table' | 'json';
}

export function register(program: Command): void {
  program
    .command('calibrate')
    .description('measure the configured embedding model on a labelled set and derive its reuse-tier thresholds (runs in-process, no server)')
    .argument('<file>', 'labelled set (JSON: clusters of wordings, lookalikes, unrelated tasks), e.g. test/fixtures/calibration/programming-tasks.json')
    .option('--rate <share>', 'highest share of unrelated tasks at adapt and of lookalikes at duplicate', rateOf, 0.05)
    .option('--stored <n>', 'wordings of each task that are stored (default: all but the last; the rest are queries)', integerIn(1, 1000))
    .option('--write <folder>', "store the thresholds as reuse_tiers in this model folder's config.json")
    .option('--json', 'print JSON (the default when stdout is not a terminal)')
    .addOption(formatOption())
    .action(action(async (file: string, opts: CalibrateOptions, command: Command) => {
      const out = createOutput(ioOf(command), { json: opts.json, format: opts.format });
      const set = parseSet(await readTextFile(file, 'calibration set'), file);
      if (opts.write) await assertFolder(opts.write);
      const config = loadConfig();
      // Loaded lazily so other commands never load the model runtime.
      const [{ openEmbedding, createCommandLogger, saveModelReuseTiers }, { calibrate }] = await Promise.all([
        import('../src/app.js'),
        import('../src/services/calibrate.js'),
      ]);
      // The embedder's startup notes (model chosen, loaded) are server chatter here: only
      // warnings and errors reach stderr unless a quieter or louder level was asked for.
      const logger = createCommandLogger({ level: config.observability.logLevel === 'info' ? 'warn' : config.observability.logLevel, json: config.observability.jsonLogs });
      const tools = await openEmbedding(config, logger);
      try {
        const report = await out.withSpinner('embedding the set…', () =>
          calibrate(tools.embedder, set, tools.reuseTiers, { rate: opts.rate, storedPerCluster: opts.stored }));
        let written: string | null = null;
        if (opts.write) written = await saveModelReuseTiers(opts.write, report.calibrated.thresholds);
        out.result({ ...report, current_source: tools.reuseTiers.source, written }, () => renderReport(report, tools.reuseTiers.source, written, out.color));
      } finally {
        await tools.close();
      }
    }));
}

function rateOf(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n >= 1) {
    throw new InvalidArgumentError('expected a share from 0 to below 1 (0.05 is 5%)');
  }
  return n;
}

function parseSet(text: string, file: string): CalibrationSetFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not valid JSON`);
  }
  const parsed = CalibrationSetFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`${file}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

async function assertFolder(folder: string): Promise<void> {
  const info = await stat(folder).catch(() => null);
  if (!info?.isDirectory()) throw new UsageError(`--write: "${folder}" is not a model folder`);
}

function renderReport(r: CalibrationReport, source: { duplicate: string; adapt: string }, written: string | null, c: ChalkInstance): string {
  const dist = (name: string, d: Distribution) => [name, String(d.n), fmt(d.p10), fmt(d.p50), fmt(d.p90), fmt(d.max)];
  const lines = [
    `model ${c.bold(r.model)}: ${r.set.clusters} tasks (${r.set.stored} stored wordings, ${r.set.queries} queries), ` +
      `${r.set.lookalikes} lookalikes, ${r.set.unrelated} unrelated`,
    '',
    'similarity distributions (best match)',
    tableOf(['', 'n', 'p10', 'p50', 'p90', 'max'], [
      dist('true match', r.distributions.true_match),
      dist('unrelated', r.distributions.unrelated),
      dist('lookalike', r.distributions.lookalike),
    ]),
    '',
    `precision@1: ${r.precision_at_1.correct} of ${r.precision_at_1.of} (${pct(r.precision_at_1.share)})`,
    '',
    `thresholds at rate ${pct(r.rate)}`,
    tableOf(['', 'duplicate', 'adapt', 'unrelated ≥ adapt', 'lookalike ≥ duplicate', 'lookalike ≥ adapt', 'true ≥ duplicate', 'true ≥ adapt'], [
      outcomeRow(`in force (${source.duplicate}/${source.adapt})`, r.current),
      outcomeRow('calibrated', r.calibrated),
    ]),
  ];
  const p = r.tier_policy;
  lines.push('', `tier policy ${c.bold(p.policy)}: ${p.duplicate_threshold === null ? 'duplicate by rule (same text, cosine ≥ 0.999 in order, or LLM)' : `duplicate ≥ ${p.duplicate_threshold}`}, ` +
    `adapt ≥ ${p.adapt_threshold} (${p.source}${p.source === 'project_fit' ? `, fitted on the ${r.set.stored} stored wordings as one project` : ''})`);
  if (written) lines.push('', c.green(`wrote reuse_tiers to ${written}`));
  return lines.join('\n');
}

function outcomeRow(name: string, o: TierOutcome): string[] {
  return [name, o.thresholds.duplicate.toFixed(2), o.thresholds.adapt.toFixed(2), share(o.unrelatedAtAdapt),
    share(o.lookalikesAtDuplicate), share(o.lookalikesAtAdapt), share(o.trueAtDuplicate), share(o.trueAtAdapt)];
}

/** Plain aligned columns (no colour codes inside, so widths stay right). */
function tableOf(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [headers, ...rows].map((r) => r.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

function share(s: Share): string {
  return `${s.count}/${s.of} (${pct(s.share)})`;
}

function pct(x: number | null): string {
  return x === null ? '-' : `${(x * 100).toFixed(1)}%`;
}

function fmt(x: number | null): string {
  return x === null ? '-' : x.toFixed(3);
}
