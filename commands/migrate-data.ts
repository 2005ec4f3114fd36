import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../src/config/index.js';
import type { RefusedPattern } from '../src/services/copy-data.js';
import { action, ioOf } from './shared/context.js';
import { ExitCode, UsageError } from './shared/exit-codes.js';
import { createOutput } from './shared/output.js';

/** The refused patterns, one line each (the JSON output lists them under `refused`). */
function refusedLines(refused: RefusedPattern[]): string[] {
  if (refused.length === 0) return [];
  return [
    `  refused by the target, not copied: ${refused.length}`,
    ...refused.map((r) => `    ${r.tenant_id}/${r.project_id} ${r.id}: ${r.reason}`),
  ];
}

interface MigrateDataOptions {
  from: string;
  to: string;
  dataPath?: string;
  json?: boolean;
}

/**
 * `service migrate-data --from json --to postgres`: copies the JSON data path
 * (SERVICE_DATA_PATH or --data-path) into the PostgreSQL database at SERVICE_DATABASE_URL.
 * Run it with the server stopped (the JSON store refuses a second user of its path) and
 * after `service migrate up`. Re-running (e.g. after the copy was killed) copies only what is
 * still missing; each pattern goes in with its evaluations and skills in one transaction.
 */
export function register(program: Command): void {
  program
    .command('migrate-data')
    .description('copy stored memory from one storage to another (json → postgres)')
    .requiredOption('--from <storage>', 'source storage: json')
    .requiredOption('--to <storage>', 'target storage: postgres')
    .option('--data-path <path>', 'JSON data path to read (default: SERVICE_DATA_PATH or ./service_data)')
    .option('--json', 'print JSON (the default when stdout is not a terminal)')
    .action(action(async (opts: MigrateDataOptions, command: Command) => {
      if (opts.from !== 'json' || opts.to !== 'postgres') {
        throw new UsageError(`only --from json --to postgres is supported (got --from ${opts.from} --to ${opts.to})`);
      }
      const out = createOutput(ioOf(command), { json: opts.json });
      const config = loadConfig();
      const dataPath = resolve(opts.dataPath ?? config.storage.dataPath);
      const isDir = await stat(dataPath).then((s) => s.isDirectory(), () => false);
      // Opening a missing path would create an empty store and "copy" nothing.
      if (!isDir) throw new UsageError(`JSON data path ${dataPath} does not exist`);

      // Loaded on use so client-only commands never pay for the storage adapters.
      const { copyJsonToPostgres } = await import('../src/app.js');
      try {
        const report = await copyJsonToPostgres(config, dataPath, {
          onReembed: () => out.note('this JSON store does not expose its vectors: re-embedding every task'),
          onProgress: (done, total) => out.progress(`copying patterns ${done}/${total}`),
        });
        out.progressDone();
        out.result({ from: dataPath, to: 'postgres', ...report }, () =>
          [
            `copied ${report.patterns} patterns from ${report.scopes} scope${report.scopes === 1 ? '' : 's'} ` +
              `(${report.skipped} already present; vectors ${report.vectors})`,
            report.completed > 0 ? `  ${report.completed} patterns copied by an interrupted run were completed (evaluations, skills)` : '',
            report.nul_stripped > 0 ? `  ${report.nul_stripped} patterns held NUL characters (PostgreSQL cannot store them): copied without them` : '',
            `  eval observations: ${report.evals}, tagged patterns: ${report.skills}, feedback clusters: ${report.feedback}, run counters of ${report.metrics} scope${report.metrics === 1 ? '' : 's'}, evaluation runs: ${report.evaluation_runs}`,
            report.embedding ? `  embedding model: ${report.embedding.model} (${report.embedding.dimension} dimensions)` : '',
            ...refusedLines(report.refused),
          ].filter(Boolean).join('\n'),
        );
        // Everything else is copied; a pattern the target refused is not, so the copy is incomplete.
        if (report.refused.length > 0) {
          out.note(`${report.refused.length} pattern${report.refused.length === 1 ? ' was' : 's were'} refused by the target and not copied (listed above)`);
          return ExitCode.FAILURE;
        }
        return ExitCode.OK;
      } finally {
        out.progressDone();
      }
    }));
}
