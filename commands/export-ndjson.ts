import { InvalidArgumentError } from 'commander';
import type { ServiceClient } from '../src/client/index.js';
import { CLASSIFICATIONS, type Classification } from '../src/core/types.js';
import type { Io } from './shared/context.js';
import { writeBytes } from './shared/byte-output.js';
import { resolveOutputTarget, writeOutput } from './shared/files.js';
import type { Output } from './shared/output.js';

/** `--classification public,internal` → the list (each name checked before any request). */
export function classificationList(value: string): Classification[] {
  const names = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const bad = names.filter((n) => !(CLASSIFICATIONS as readonly string[]).includes(n));
  if (names.length === 0 || bad.length > 0) {
    throw new InvalidArgumentError(`expected a comma-separated list of ${CLASSIFICATIONS.join(', ')}${bad.length ? ` (not: ${bad.join(', ')})` : ''}`);
  }
  return names as Classification[];
}

const countLines = (chunk: Buffer) => {
  let n = 0;
  for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) n++;
  return n;
};

/**
 * `service export --ndjson`: streams GET /v1/governance/export chunk by chunk, as bytes, to
 * stdout (waiting whenever stdout is full) or to --output (commands/shared/files.ts: a regular
 * file is replaced atomically once complete, so a broken transfer never leaves a truncated
 * export under the final name; a symlink is written through, a FIFO or device written in
 * place). Progress (records so far) on a TTY stderr.
 */
export async function exportNdjson(
  client: ServiceClient,
  out: Output,
  io: Io,
  opts: { output?: string; classifications?: Classification[] },
): Promise<void> {
  // Refuses a directory or a socket before the export is requested (and audited).
  const target = opts.output === undefined ? undefined : await resolveOutputTarget(opts.output);
  const { body } = await client.governance.exportNdjsonRaw({ classifications: opts.classifications });
  let records = 0;
  const tick = (chunk: Buffer) => {
    records += countLines(chunk);
    out.progress(`exported ${records} patterns…`);
  };
  try {
    if (target === undefined) {
      for await (const chunk of body) {
        await writeBytes(io.stdout, chunk);
        tick(chunk);
      }
      return;
    }
    await writeOutput(target, async (write) => {
      for await (const chunk of body) {
        await write(chunk);
        tick(chunk);
      }
    });
  } finally {
    body.destroy();
    out.progressDone();
  }
  out.result({ count: records, output: target.named, format: 'ndjson' }, () => `exported ${records} patterns to ${target.named} (NDJSON)`);
}
