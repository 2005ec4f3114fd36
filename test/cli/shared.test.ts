import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/index.js';
import { NotFoundError, QuotaExceededError, ValidationError } from '../../src/core/errors.js';
import { ApiError, InvalidUrlError, ProtocolError, TransportError } from '../../src/client/index.js';
import { ExitCode, UsageError, exitCodeFor, exitCodeForStatus } from '../../commands/shared/exit-codes.js';
import { assertSingleStdin, readTextArg } from '../../commands/shared/input.js';
import { createOutput, printError, snippet, table } from '../../commands/shared/output.js';
import { fakeIo } from '../support/fake-io.js';
import { tempDir } from '../support/env.js';
import { hasColour, stripAnsi } from '../support/cli.js';


describe('input: literal, - (stdin) and @file', () => {
  let dir: { path: string; remove(): Promise<void> };
  beforeAll(async () => {
    dir = await tempDir('cli-input-');
  });
  afterAll(() => dir.remove());

  it('passes literal text through unchanged', async () => {
    expect(await readTextArg('print(1)', Readable.from([]), '--code')).toBe('print(1)');
  });

  it('reads stdin for "-" and drops exactly one trailing newline', async () => {
    expect(await readTextArg('-', Readable.from([Buffer.from('sort a list\n\n')]), 'task')).toBe('sort a list\n');
    expect(await readTextArg('-', Readable.from([Buffer.from('a'), Buffer.from('b\r\n')]), 'task')).toBe('ab');
  });

  it('reads @file verbatim', async () => {
    const file = join(dir.path, 'solution.py');
    await writeFile(file, 'def f():\n    return 1\n');
    expect(await readTextArg(`@${file}`, Readable.from([]), '--code')).toBe('def f():\n    return 1\n');
  });

  it('names the flag and the path when the file is missing', async () => {
    const missing = join(dir.path, 'nope.py');
    const err = await readTextArg(`@${missing}`, Readable.from([]), '--code').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe(`cannot read --code file "${missing}": no such file`);
  });

  it('refuses two arguments reading stdin', () => {
    expect(() => assertSingleStdin({ '--task': '-', '--code': '-' })).toThrow(/only one argument can read stdin.*--task and --code/);
    expect(() => assertSingleStdin({ '--task': '-', '--code': '@x' })).not.toThrow();
  });
});

describe('output modes', () => {
  it('prints JSON when stdout is piped, even without --json', () => {
    const { io, stdout } = fakeIo({ stdoutTTY: false });
    const out = createOutput(io);
    out.result({ stored: true }, () => 'human');
    expect(out.json).toBe(true);
    expect(JSON.parse(stdout.text)).toEqual({ stored: true });
  });

  it('prints the human rendering on a TTY, and JSON there with --json', () => {
    const human = fakeIo({ stdoutTTY: true });
    createOutput(human.io).result({ stored: true }, () => 'stored');
    expect(human.stdout.text).toBe('stored\n');

    const json = fakeIo({ stdoutTTY: true });
    createOutput(json.io, { json: true }).result({ stored: true }, () => 'stored');
    expect(JSON.parse(json.stdout.text)).toEqual({ stored: true });
  });

  it('colours only on a TTY and never with NO_COLOR', () => {
    // Colours reach the terminal when written (until then they are marked: terminal-text.ts).
    const written = (opts: Parameters<typeof fakeIo>[0]) => {
      const { io, stdout } = fakeIo(opts);
      const out = createOutput(io, { format: 'table' });
      out.line(out.color.green('x'));
      return stdout.text;
    };
    expect(hasColour(written({ stdoutTTY: true }))).toBe(true);
    expect(written({ stdoutTTY: true, env: { noColor: true } })).toBe('x\n');
    expect(written({ stdoutTTY: false })).toBe('x\n');
  });

  it('keeps notes and progress off stdout, and progress off a non-TTY stderr', () => {
    const { io, stdout, stderr } = fakeIo({ stdoutTTY: true, stderrTTY: false });
    const out = createOutput(io);
    out.note('a note');
    out.progress('1/2');
    out.progressDone();
    expect(stdout.text).toBe('');
    expect(stderr.text).toBe('a note\n');
  });

  it('aligns table columns by visible width, ignoring colour codes', () => {
    const { io, stdout } = fakeIo({ stdoutTTY: true });
    const out = createOutput(io);
    out.line(table(['rank', 'tier', 'task'], [['1', out.color.green('duplicate'), 'a'], ['10', 'adapt', 'b']]));
    expect(hasColour(stdout.text)).toBe(true);
    expect(stripAnsi(stdout.text).trimEnd().split('\n')).toEqual([
      'rank  tier       task',
      '1     duplicate  a',
      '10    adapt      b',
    ]);
  });

  it('shortens a multi-line task to one line', () => {
    expect(snippet('sort\n  a   list', 60)).toBe('sort a list');
    expect(snippet('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
  });
});

describe('errors', () => {
  it('prints error: <detail>, the field errors it does not already name, and an auth hint', () => {
    const { io, stderr } = fakeIo();
    const detail = 'invalid body: eval_score: too big (and 1 more)';
    printError(io, new ApiError(422, detail, {
      detail,
      errors: [{ path: 'eval_score', message: 'too big' }, { path: 'task', message: 'must not be blank' }],
    }, 'req-1'));
    expect(stderr.text).toBe('error: invalid body: eval_score: too big (and 1 more)\n  task: must not be blank\n');

    const auth = fakeIo();
    printError(auth.io, new ApiError(401, 'missing or invalid API key', { detail: 'missing or invalid API key' }, null));
    expect(auth.stderr.text).toContain('error: missing or invalid API key\n  hint: pass --api-key or set SERVICE_API_KEY');
  });

  it('hints fit the refusal: bootstrap token, server without DB auth, --retry-wait 0', () => {
    const hintOf = (status: number, detail: string, retryWaitSeconds?: number) => {
      const { io, stderr } = fakeIo();
      printError(io, new ApiError(status, detail, { detail }, null), { retryWaitSeconds });
      return /hint: (.*)/.exec(stderr.text)?.[1] ?? null;
    };
    const bootstrap = hintOf(401, 'invalid bootstrap token');
    expect(bootstrap).toMatch(/SERVICE_BOOTSTRAP_TOKEN/);
    expect(bootstrap).not.toMatch(/--api-key/);
    // A dev- or env-auth server: no key would help, so no `service keys list`.
    for (const [status, detail] of [
      [403, 'setting the retention policy needs DB auth mode (SERVICE_AUTH_MODE=db, or auto with SERVICE_DATABASE_URL); this request used dev auth'],
      [404, 'API keys need DB auth mode (SERVICE_AUTH_MODE=db, or auto with SERVICE_DATABASE_URL); this server uses dev auth'],
    ] as const) {
      const hint = hintOf(status, detail);
      expect(hint).toMatch(/SERVICE_AUTH_MODE=db/);
      expect(hint).not.toMatch(/keys list/);
    }
    expect(hintOf(403, 'the "keys:list" permission is required; this API key\'s role is editor')).toMatch(/service keys list/);
    expect(hintOf(429, 'rate limit exceeded', 0)).toMatch(/^the CLI did not wait \(--retry-wait 0\)/);
    expect(hintOf(429, 'rate limit exceeded', 120)).toMatch(/^the CLI waited as long as --retry-wait allows/);
    expect(hintOf(501, 'billing is off on this server: set PAYMENT_SECRET_KEY')).toBeNull();
  });

  it('keys against a server without DB auth end as a feature the server has not configured (exit 1, not 4)', () => {
    const detail = 'API keys need DB auth mode (SERVICE_AUTH_MODE=db, or auto with SERVICE_DATABASE_URL); this server uses dev auth';
    expect(exitCodeFor(new ApiError(404, detail, { detail, code: 'not_found' }, null))).toBe(ExitCode.FAILURE);
    expect(exitCodeFor(new ApiError(404, 'pattern not found', { detail: 'pattern not found', code: 'not_found' }, null))).toBe(ExitCode.NOT_FOUND);
  });

  it('maps statuses through the one exit-code table', () => {
    const expected: [number, number][] = [
      [200, 0], [400, 2], [422, 2], [413, 2], [401, 3], [403, 3], [404, 4], [402, 5], [429, 5],
      [409, 1], [500, 1], [501, 1], [502, 1], [503, 1],
    ];
    for (const [status, code] of expected) expect([status, exitCodeForStatus(status)]).toEqual([status, code]);
  });

  it('maps local and domain errors too', () => {
    expect(exitCodeFor(new TransportError('http://x', 'refused', 'ECONNREFUSED'))).toBe(ExitCode.FAILURE);
    expect(exitCodeFor(new ProtocolError('http://x', 'bad shape'))).toBe(ExitCode.FAILURE);
    expect(exitCodeFor(new UsageError('bad flag'))).toBe(ExitCode.USAGE);
    expect(exitCodeFor(new InvalidUrlError('nope'))).toBe(ExitCode.USAGE);
    expect(exitCodeFor(new ConfigError('SERVICE_PORT', 'bad'))).toBe(ExitCode.USAGE);
    expect(exitCodeFor(new ValidationError('bad'))).toBe(ExitCode.USAGE);
    expect(exitCodeFor(new NotFoundError('gone'))).toBe(ExitCode.NOT_FOUND);
    expect(exitCodeFor(new QuotaExceededError('patterns', 5, 5, '2030-01-01'))).toBe(ExitCode.LIMITED);
    expect(exitCodeFor(new Error('boom'))).toBe(ExitCode.FAILURE);
  });
});
