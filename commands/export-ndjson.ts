import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import type { ServiceClient } from '../src/client/index.js';
import { CLASSIFICATIONS, type Classification } from '../src/core/types.js';
import type { Io } from './shared/context.js';
import { writeFileAtomic } from './shared/files.js';
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
 * `service export --ndjson`: streams GET /v1/governance/export chunk by chunk to stdout or to
 * a file (a temp file renamed into place once complete, so a broken transfer never leaves a
 * truncated export under the final name). Progress (records so far) on a TTY stderr.
 */
export async function exportNdjson(
  client: ServiceClient,
  out: Output,
  io: Io,
  opts: { output?: string; classifications?: Classification[] },
): Promise<void> {
  const { body } = await client.governance.exportNdjsonRaw({ classifications: opts.classifications });
  let records = 0;
  const tick = (chunk: Buffer) => {
    records += countLines(chunk);
    out.progress(`exported ${records} patterns…`);
  };
  if (opts.output === undefined) {
    for await (const raw of body) {
      const chunk = asBuffer(raw);
      io.stdout.write(chunk.toString('utf8'));
      tick(chunk);
    }
    out.progressDone();
    return;
  }
  const path = resolve(opts.output);
  try {
    await writeFileAtomic(path, async (handle) => {
      for await (const raw of body) {
        const chunk = asBuffer(raw);
        await handle.write(chunk);
        tick(chunk);
      }
    });
  } finally {
    body.destroy();
    out.progressDone();
  }
  out.result({ count: records, output: path, format: 'ndjson' }, () => `exported ${records} patterns to ${path} (NDJSON)`);
}

/** The client types its chunks as Uint8Array (its declarations need no @types/node); same memory. */
function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}
