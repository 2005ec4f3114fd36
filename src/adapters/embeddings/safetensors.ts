import { readFile } from 'node:fs/promises';
import { endianness } from 'node:os';

/**
 * A dependency-free reader for safetensors files: an 8-byte little-endian header length, a
 * JSON header naming each tensor's dtype, shape and byte range, then the raw little-endian
 * data. Every fault (short file, header out of bounds, byte range not matching dtype × shape)
 * is refused with a SafetensorsError naming the file, because a bad table would otherwise
 * surface much later as silently wrong vectors.
 */

export type TensorDtype = 'F32' | 'F16' | 'I8';

const BYTES_PER_ELEMENT: Record<TensorDtype, number> = { F32: 4, F16: 2, I8: 1 };

/** The format's own cap on the header (a larger claim is a corrupt or hostile file). */
const MAX_HEADER_BYTES = 100 * 1024 * 1024;

export interface Tensor {
  dtype: TensorDtype;
  shape: number[];
  /** The tensor's bytes, aligned for a typed-array view of its dtype. */
  bytes: Uint8Array;
}

export class SafetensorsError extends Error {
  constructor(readonly file: string, fault: string) {
    super(`${file}: ${fault}`);
    this.name = 'SafetensorsError';
  }
}

interface HeaderEntry {
  dtype?: unknown;
  shape?: unknown;
  data_offsets?: unknown;
}

/** Reads `file` and returns its tensors by name (the `__metadata__` entry is skipped). */
export async function readSafetensors(file: string): Promise<Map<string, Tensor>> {
  const buffer = await readFile(file);
  return parseSafetensors(buffer, file);
}

/** Parses safetensors bytes; `file` only names the source in errors. */
export function parseSafetensors(buffer: Uint8Array, file: string): Map<string, Tensor> {
  if (endianness() !== 'LE') throw new SafetensorsError(file, 'reading safetensors needs a little-endian machine');
  const fail = (fault: string): never => {
    throw new SafetensorsError(file, fault);
  };
  if (buffer.byteLength < 8) fail(`truncated: ${buffer.byteLength} bytes, too short for the 8-byte header length`);
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const headerLength = view.getBigUint64(0, true);
  if (headerLength > BigInt(MAX_HEADER_BYTES)) fail(`header length ${headerLength} exceeds the ${MAX_HEADER_BYTES}-byte limit`);
  const headerEnd = 8 + Number(headerLength);
  if (headerEnd > buffer.byteLength) {
    fail(`truncated: the header claims ${headerLength} bytes but the file has ${buffer.byteLength - 8} after the length`);
  }

  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(8, headerEnd)));
  } catch (err) {
    fail(`the header is not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) fail('the header is not a JSON object');

  const dataLength = buffer.byteLength - headerEnd;
  const tensors = new Map<string, Tensor>();
  for (const [name, raw] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') continue;
    const entry = (raw ?? {}) as HeaderEntry;
    const dtype = entry.dtype;
    if (typeof dtype !== 'string' || !(dtype in BYTES_PER_ELEMENT)) {
      fail(`tensor "${name}" has dtype ${JSON.stringify(dtype)}; supported: ${Object.keys(BYTES_PER_ELEMENT).join(', ')}`);
    }
    const shape = entry.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && (d as number) >= 0)) {
      fail(`tensor "${name}" has an invalid shape ${JSON.stringify(shape)}`);
    }
    const offsets = entry.data_offsets;
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && (o as number) >= 0)) {
      fail(`tensor "${name}" has invalid data_offsets ${JSON.stringify(offsets)}`);
    }
    const [start, end] = offsets as [number, number];
    if (start > end || end > dataLength) {
      fail(`tensor "${name}" spans bytes ${start}–${end} but the data section has ${dataLength} bytes (truncated or oversized header)`);
    }
    const width = BYTES_PER_ELEMENT[dtype as TensorDtype];
    const expected = (shape as number[]).reduce((n, d) => n * d, 1) * width;
    if (end - start !== expected) {
      fail(`tensor "${name}" holds ${end - start} bytes but ${dtype} ${JSON.stringify(shape)} needs ${expected} (mislabelled dtype or shape)`);
    }
    tensors.set(name, { dtype: dtype as TensorDtype, shape: shape as number[], bytes: aligned(buffer, headerEnd + start, end - start, width) });
  }
  return tensors;
}

/** A view of the bytes when they sit on a `width` boundary, else an aligned copy. */
function aligned(buffer: Uint8Array, offset: number, length: number, width: number): Uint8Array {
  const view = buffer.subarray(offset, offset + length);
  return (buffer.byteOffset + offset) % width === 0 ? view : view.slice();
}
