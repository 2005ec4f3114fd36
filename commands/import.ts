import type { Command } from 'commander';
import { AnyImportRecord } from '../src/contracts/memory.js';
import type { AnyImportRecord as AnyImportRecordInput, ApiClient, EvaluationRunLine, ImportResponse, TracedOutcomesLine } from '../src/client/index.js';
import { splitExportLines } from '../src/core/export-lines.js';
import { MAX_IMPORT_RECORDS } from '../src/core/vocabulary.js';
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
    .description(`import patterns from an export ({records: [...]}, a bare array, or NDJSON: one record a line), in chunks of ${MAX_IMPORT_RECORDS.toLocaleString('en-US')}; `
      + "records may be ours or the reference system's ({version: 1, key, data})")
    .argument('<file>', 'the JSON or NDJSON file, or - for stdin')
    .option('--overwrite', 'replace patterns whose key already exists (default: skip them)');
  addClientOptions(cmd);
  addAsyncOptions(cmd);

  cmd.action(action(async (file: string, opts: ImportOptions, command: Command) => {
    const source = file === '-' ? '-' : `@${file}`;
    const text = await readTextArg(source, ioOf(command).stdin, 'import');
    const { records, outcomes, evaluationRuns } = parseImport(text, file === '-' ? 'stdin' : file);

    return withClient(opts, command, async (client, out) => {
      if (opts.async || opts.wait) {
        const waited = await importViaJobs(opts, client, out, records);
        if (!waited) return;
        const result: ImportResponse = outcomes.length > 0 ? { ...waited, outcomes_imported: await client.importOutcomes(outcomes) } : { ...waited };
        await restoreRuns(client, evaluationRuns, result);
        out.result(result, () => renderTotals(result));
        return;
      }
      const totals = await client.importAll(records, {
        overwrite: opts.overwrite === true,
        // Records sent, not imported: the server may still skip them (existing keys), and the
        // totals printed after must not contradict the progress line.
        onProgress: (sent, total) => out.progress(`sent ${sent}/${total} records`),
      });
      out.progressDone();
      // The outcomes after the patterns they belong to (docs/behavior.md "Outcomes" 6).
      if (outcomes.length > 0) totals.outcomes_imported = await client.importOutcomes(outcomes);
      await restoreRuns(client, evaluationRuns, totals);
      out.result(totals, () => renderTotals(totals));
    });
  }));
}

/** (+) The file's evaluation runs (docs/behavior.md "Evaluation runs"), counted into `totals`. */
async function restoreRuns(client: ApiClient, lines: EvaluationRunLine[], totals: ImportResponse): Promise<void> {
  if (lines.length === 0) return;
  const runs = await client.importEvaluationRuns(lines);
  totals.evaluation_runs_imported = runs.imported;
  totals.evaluation_runs_skipped = runs.skipped;
}

function renderTotals(totals: ImportResponse): string {
  const lines = [`imported ${totals.imported}, skipped ${totals.skipped} (total ${totals.total})`];
  if (totals.outcomes_imported !== undefined) lines.push(`restored ${totals.outcomes_imported} recall traces with their outcomes`);
  if (totals.evaluation_runs_imported !== undefined) {
    lines.push(`restored ${totals.evaluation_runs_imported} evaluation runs with their cases, skipped ${totals.evaluation_runs_skipped ?? 0} already stored`);
  }
  for (const s of totals.skipped_records ?? []) lines.push(`  skipped records[${s.index}]${s.key === null ? '' : ` ${s.key}`}: ${s.reason}`);
  return lines.join('\n');
}

/**
 * The records of a file: what `service export` writes ({records, count}), a bare array, or
 * NDJSON (one record a line, as the governance export writes it). Whole-document JSON is
 * tried first; a document that is not JSON as a whole is read line by line.
 */
function recordsOf(text: string, name: string): unknown[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    const lines = text.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
    if (lines.length < 2) throw new UsageError(`${name} is not valid JSON: ${(err as Error).message}`);
    return lines.map((line, i) => {
      try {
        return JSON.parse(line) as unknown;
      } catch (lineErr) {
        throw new UsageError(`${name} is neither JSON nor NDJSON: line ${i + 1}: ${(lineErr as Error).message}`);
      }
    });
  }
  if (Array.isArray(doc)) return doc;
  if (typeof doc === 'object' && doc !== null) {
    const records = (doc as { records?: unknown }).records;
    if (Array.isArray(records)) return records;
    // A one-line NDJSON file is a single record.
    if (records === undefined && ('task' in doc || 'version' in doc)) return [doc];
  }
  throw new UsageError(`${name}: expected {"records": [...]}, a JSON array of records, or NDJSON (one record a line)`);
}

/**
 * The file's records and (+) its `type: "outcomes"` and `type: "evaluation_run"` lines (the
 * NDJSON export's, after the records).
 */
function parseImport(
  text: string,
  name: string,
): { records: AnyImportRecordInput[]; outcomes: TracedOutcomesLine[]; evaluationRuns: EvaluationRunLine[] } {
  const { records, outcomes, evaluation_runs } = splitExportLines(recordsOf(text, name));
  return {
    records: checkRecords(records, name),
    outcomes: outcomes as TracedOutcomesLine[],
    evaluationRuns: evaluation_runs as EvaluationRunLine[],
  };
}

/**
 * Checks every record against the import contract first, so a bad record 15,000 lines in does
 * not leave a half-imported project behind. Records the server will skip (an unknown version,
 * a key outside patterns/) pass: the server reports them with the reason.
 */
export function parseRecords(text: string, name: string): AnyImportRecordInput[] {
  return checkRecords(recordsOf(text, name), name);
}

function checkRecords(records: unknown[], name: string): AnyImportRecordInput[] {
  const problems: string[] = [];
  let bad = 0;
  records.forEach((record, i) => {
    const parsed = AnyImportRecord.safeParse(record);
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
  return records as AnyImportRecordInput[];
}
