/** The part of a composed stage that contract validation looks at. */
export interface StageContract {
  name: string;
  reads: string[];
  writes: string[];
}

/**
 * Is `name` an initial input the task itself mentions? Case-insensitive; `_` and `-` count
 * as spaces on both sides (so "raw_data" is named by "the raw data"), and the mention must
 * stand on its own: "data.csv" is named by "load data.csv" or "in/data.csv" but not by
 * "metadata.csv". A path read is also named when only its last segment appears
 * ("inputs/raw.csv" by "raw.csv"), because tasks rarely spell out directories.
 */
export function isNamedInTask(task: string, name: string): boolean {
  const haystack = normalizeName(task);
  const candidates = new Set([normalizeName(name), normalizeName(name.split(/[\\/]/).pop() ?? '')]);
  for (const candidate of candidates) {
    if (candidate === '') continue;
    let from = 0;
    for (;;) {
      const at = haystack.indexOf(candidate, from);
      if (at === -1) break;
      const before = haystack[at - 1];
      const after = haystack[at + candidate.length];
      if (!isWordChar(before) && !isWordChar(after)) return true;
      from = at + 1;
    }
  }
  return false;
}

function normalizeName(s: string): string {
  return s.toLowerCase().replace(/[_-]+/g, ' ').replace(/\s+/g, ' ').trim();
}

function isWordChar(c: string | undefined): boolean {
  return c !== undefined && /[\p{L}\p{N}]/u.test(c);
}

const quote = (s: string): string => JSON.stringify(s);

function cleanNames(names: readonly string[]): string[] {
  return [...new Set(names.map((n) => n.trim()).filter((n) => n !== ''))];
}

/**
 * Contract validation of a composed pipeline's data flow (docs/behavior.md "Compose"). Stages
 * run in order; file names are compared exactly after trimming. Problems, in stage order:
 * - cycle: a stage reads a file it writes itself, or reads a file that only a LATER stage
 *   writes (the data would have to flow backwards). This holds even for a file the task
 *   names: a pipeline that overwrites its own input cannot be re-run, so stages should
 *   write new names.
 * - broken dependency: a read that no earlier stage writes and the task does not name.
 * - conflict (listed last): a file written by two or more stages.
 * Returns [] for a valid pipeline.
 */
export function validatePipeline(task: string, stages: StageContract[]): string[] {
  if (stages.length === 0) return ['the pipeline has no stages'];
  const errors: string[] = [];
  const writers = new Map<string, number[]>();
  stages.forEach((stage, index) => {
    for (const file of cleanNames(stage.writes)) writers.set(file, [...(writers.get(file) ?? []), index]);
  });
  const label = (index: number): string => `stage ${index + 1} ${quote(stages[index].name)}`;

  stages.forEach((stage, index) => {
    for (const file of cleanNames(stage.reads)) {
      const writtenBy = writers.get(file) ?? [];
      if (writtenBy.includes(index)) {
        errors.push(`cycle: ${label(index)} both reads and writes ${quote(file)}`);
      } else if (writtenBy.some((w) => w < index)) {
        continue;
      } else if (writtenBy.length > 0) {
        errors.push(`cycle: ${label(index)} reads ${quote(file)} before ${label(writtenBy[0])} writes it`);
      } else if (!isNamedInTask(task, file)) {
        errors.push(
          `broken dependency: ${label(index)} reads ${quote(file)}, which no earlier stage writes and the task does not name as an input`,
        );
      }
    }
  });

  for (const [file, writtenBy] of writers) {
    if (writtenBy.length > 1) {
      errors.push(`conflict: ${quote(file)} is written by ${writtenBy.map(label).join(' and ')}`);
    }
  }
  return errors;
}
