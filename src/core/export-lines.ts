/**
 * (+) The NDJSON export's lines that are not pattern records, by their `type`: recall traces
 * with outcomes (docs/behavior.md "Outcomes") and evaluation runs with their cases
 * (docs/behavior.md "Evaluation runs"). An import reads each kind into its own field.
 */
export const OUTCOMES_LINE = 'outcomes';
export const EVALUATION_RUN_LINE = 'evaluation_run';

const typeOf = (line: unknown): unknown => (typeof line === 'object' && line !== null ? (line as { type?: unknown }).type : undefined);

/** True for a line that is not a pattern record. */
export function isNonRecordLine(line: unknown): boolean {
  const type = typeOf(line);
  return type === OUTCOMES_LINE || type === EVALUATION_RUN_LINE;
}

/** The export's lines sorted into pattern records, outcomes lines and evaluation run lines, each in file order. */
export function splitExportLines(lines: unknown[]): { records: unknown[]; outcomes: unknown[]; evaluation_runs: unknown[] } {
  return {
    records: lines.filter((l) => !isNonRecordLine(l)),
    outcomes: lines.filter((l) => typeOf(l) === OUTCOMES_LINE),
    evaluation_runs: lines.filter((l) => typeOf(l) === EVALUATION_RUN_LINE),
  };
}
