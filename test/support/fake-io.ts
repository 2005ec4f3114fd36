import { Readable } from 'node:stream';
import type { ClientEnv } from '../../src/config.js';
import type { Io } from '../../commands/shared/context.js';

export interface FakeStream {
  text: string;
  isTTY: boolean;
  write(chunk: string): boolean;
}

function stream(isTTY: boolean): FakeStream {
  return {
    text: '',
    isTTY,
    write(chunk: string) {
      this.text += chunk;
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
