import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { ClientEnv } from '../../src/config/index.js';
import type { Io } from '../../commands/shared/context.js';

export interface FakeStream {
  text: string;
  isTTY: boolean;
  write(chunk: string | Uint8Array): boolean;
}

function stream(isTTY: boolean): FakeStream {
  // Bytes (an export streamed to stdout) are decoded across chunks, as a terminal would.
  const decoder = new StringDecoder('utf8');
  return {
    text: '',
    isTTY,
    write(chunk: string | Uint8Array) {
      this.text += typeof chunk === 'string' ? chunk : decoder.write(Buffer.from(chunk));
      return true;
    },
  };
}

/** In-memory streams for calling main() or the output helpers inside the test process. */
export function fakeIo(opts: { stdoutTTY?: boolean; stderrTTY?: boolean; stdin?: string; env?: Partial<ClientEnv> } = {}) {
  const stdout = stream(opts.stdoutTTY ?? false);
  const stderr = stream(opts.stderrTTY ?? false);
  const env: ClientEnv = {
    url: 'http://127.0.0.1:8000',
    apiKey: null,
    project: null,
    bootstrapToken: null,
    noColor: false,
    ci: false,
    ...opts.env,
  };
  const io: Io = { stdout, stderr, stdin: Readable.from([Buffer.from(opts.stdin ?? '')]), env };
  return { io, stdout, stderr };
}
