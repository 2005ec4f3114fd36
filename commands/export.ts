import type { Command } from 'commander';
import type { Classification } from '../src/core/types.js';
import { classificationList, exportNdjson } from './export-ndjson.js';
import { action, ioOf } from './shared/context.js';
import { UsageError } from './shared/exit-codes.js';
import { resolveOutputTarget, writeOutput } from './shared/files.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';

interface ExportOptions extends ClientOptionValues {
  output?: string;
  ndjson?: boolean;
  classification?: Classification[];
}

export function register(program: Command): void {
  const cmd = program
    .command('export')
    .description('export every pattern of the project as JSON {records, count} (re-importable with `service import`)')
    .option('--output <file>', 'write to this file instead of stdout (a regular file is replaced atomically; a symlink is written through; a FIFO or device is written in place)')
    .option('--ndjson', 'stream the governance export: one record per line with tenant_id and project_id')
    .option('--classification <list>', 'with --ndjson: only these classifications, e.g. public,internal', classificationList);
  addClientOptions(cmd);

  cmd.action(action(async (opts: ExportOptions, command: Command) =>
    withClient(opts, command, async (client, out) => {
      if (opts.ndjson) return exportNdjson(client, out, ioOf(command), { output: opts.output, classifications: opts.classification });
      if (opts.classification) throw new UsageError('--classification needs --ndjson');
      const target = opts.output === undefined ? undefined : await resolveOutputTarget(opts.output);
      const res = await out.withSpinner('exporting…', () => client.exportAll());
      const document = `${JSON.stringify(res, null, 2)}\n`;
      if (target === undefined) {
        // The export itself is the result: always JSON, whatever the terminal, byte for byte
        // (not out.line(), which escapes controls for a person).
        ioOf(command).stdout.write(document);
        return;
      }
      await writeOutput(target, document);
      out.result({ count: res.count, output: target.named }, () => `exported ${res.count} patterns to ${target.named}`);
    })));
}
