import { describe, expect, it } from 'vitest';
import { numberedLines, type InputLine, type LineReadStats } from '../../commands/shared/batch-lines.js';

async function collect(chunks: (Buffer | string)[], options: { maxBytes?: number; stats?: LineReadStats } = {}): Promise<InputLine[]> {
  async function* source() {
    yield* chunks;
  }
  const out: InputLine[] = [];
  for await (const line of numberedLines(source(), options)) out.push(line);
  return out;
}

/** `text` cut into pieces of `size` bytes, as a pipe or a file stream hands it over. */
function chunked(text: string, size: number): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

describe('numberedLines (the --batch line reader)', () => {
  it('scans each byte once and copies it at most once, however long a line is (linear, not quadratic)', async () => {
    const long = 'x'.repeat(8 * 1024 * 1024);
    const input = `{"a":1}\n${long}\n{"b":2}\n`;
    const stats: LineReadStats = { scanned: 0, copied: 0 };
    const lines = await collect(chunked(input, 64 * 1024), { maxBytes: 16 * 1024 * 1024, stats });
    expect(lines.map((l) => [l.line, l.text.length])).toEqual([[1, 7], [2, long.length], [3, 7]]);
    const total = Buffer.byteLength(input);
    expect(stats.scanned).toBe(total);
    expect(stats.copied).toBeLessThanOrEqual(total);
  });

  it('keeps line numbers, skips blank lines, drops CR of CRLF, decodes characters split across chunks', async () => {
    const input = 'première ligne\r\n\n  \nzweite Zeile 😀\nlast without end';
    const lines = await collect(chunked(input, 3));
    expect(lines).toEqual([
      { line: 1, text: 'première ligne' },
      { line: 4, text: 'zweite Zeile 😀' },
      { line: 5, text: 'last without end' },
    ]);
  });

  it('a line over the byte cap comes out as oversize with its size, without its text; the next lines are read as usual', async () => {
    const input = `short\n${'y'.repeat(5000)}\n${'z'.repeat(100)}\nlast`;
    const lines = await collect(chunked(input, 700), { maxBytes: 100 });
    expect(lines).toEqual([
      { line: 1, text: 'short' },
      { line: 2, text: '', oversize: { bytes: 5000, limit: 100 } },
      { line: 3, text: 'z'.repeat(100) },
      { line: 4, text: 'last' },
    ]);
  });
});
