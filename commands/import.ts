import type { Command } from 'commander';
import { ImportRecord } from '../src/contracts/memory.js';
import type { ImportRecord as ImportRecordInput } from '../src/client/index.js';
import { addAsyncOptions, importViaJobs, type AsyncOptionValues } from './shared/async-jobs.js';
import { action, ioOf } from './shared/context.js';
import { UsageError } from './shared/exit-codes.js';
import { readTextArg } from './shared/input.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';

interface ImportOptions extends ClientOptionValues, AsyncOptionValues {
  overwrite?: boolean;
}

const MAX_REPORTED_PROBLEMS = 5;

export function register(program: Command): void {
  const cmd = program
    .command('import')
    .description('import patterns from an export ({records: [...]} or a bare array), in chunks of 10,000')
    .argument('<file>', 'the JSON file, or - for stdin')
    .option('--overwrite', 'replace patterns whose key already exists (default: skip them)');
  addClientOptions(cmd);
  addAsyncOptions(cmd);

  cmd.action(action(async (file: string, opts: ImportOptions, command: Command) => {
    const source = file === '-' ? '-' : `@${file}`;
    const text = await readTextArg(source, ioOf(command).stdin, 'import');
    const records = parseRecords(text, file === '-' ? 'stdin' : file);

    return withClient(opts, command, async (client, out) => {
      if (opts.async || opts.wait) {
        const waited = await importViaJobs(opts, client, out, records);
        if (waited) out.result(waited, () => `imported ${waited.imported}, skipped ${waited.skipped} (total ${waited.total})`);
        return;
      }
      const totals = await client.importAll(records, {
        overwrite: opts.overwrite === true,
        onProgress: (sent, total) => out.progress(`imported ${sent}/${total} records`),
      });
      out.progressDone();
      out.result(totals, () => `imported ${totals.imported}, skipped ${totals.skipped} (total ${totals.total})`);
    });
  }));
}

/**
 * Accepts what `service export` writes ({records, count}) or a bare array, and checks every
 * record against the import contract first, so a bad record 15,000 lines in does not leave
 * a half-imported project behind.
 */
export function parseRecords(text: string, name: string): ImportRecordInput[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${name} is not valid JSON: ${(err as Error).message}`);
  }
  const records = Array.isArray(doc)
    ? doc
    : typeof doc === 'object' && doc !== null && Array.isArray((doc as { records?: unknown }).records)
      ? (doc as { records: unknown[] }).records
      : null;
  if (records === null) throw new UsageError(`${name}: expected {"records": [...]} or a JSON array of records`);

  const problems: string[] = [];
  let bad = 0;
  records.forEach((record, i) => {
    const parsed = ImportRecord.safeParse(record);
    if (parsed.success) return;
    bad++;
    if (problems.length < MAX_REPORTED_PROBLEMS) {
      const issue = parsed.error.issues[0];
      problems.push(`records[${i}]${issue.path.length ? `.${issue.path.join('.')}` : ''}: ${issue.message}`);
    }
  });
  if (bad > 0) {
    const more = bad > problems.length ? `\n  … and ${bad - problems.length} more` : '';
    throw new UsageError(`${name}: ${bad} invalid record(s), nothing imported\n  ${problems.join('\n  ')}${more}`);
  }
  return records as ImportRecordInput[];
}
