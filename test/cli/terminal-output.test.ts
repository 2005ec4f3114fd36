import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../commands/main.js';
import { tempDir } from '../support/env.js';
import { fakeIo } from '../support/fake-io.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * Text from the service never drives the operator's terminal: a stored task or code holding
 * escape sequences (clear screen, recolour), a bell, a carriage return, C1 controls or bidi
 * overrides is shown with those characters as visible escapes, in every table and plain line
 * and in error messages that echo the server; only the CLI's own colour codes reach the
 * terminal. JSON output stays exact. The CLI runs in-process (main()) with TTY streams, so
 * the test reads the exact bytes a terminal would get.
 */
const HOSTILE = '\x1b[2J\x1b[31m\x07\r\x9b1m\u202eevil\u202c\u2066x\u2069';
const VISIBLE = '\\x1b[2J\\x1b[31m\\x07\\x0d\\x9b1m\\u202eevil\\u202c\\u2066x\\u2069';
const TASK = `parse a CSV file ${HOSTILE} into rows`;
const CODE = `import csv ${HOSTILE}\nrows = list(csv.reader(f))`;

// Any control or bidi formatting character other than tab and line feed.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
// The CLI's own colours: chalk's basic SGR codes, which the fixture's stored `ESC[31m` also is.
// eslint-disable-next-line no-control-regex
const SGR = /\x1b\[[0-9;]*m/g;

let server: ServerHandle;
let dir: { path: string; remove(): Promise<void> };

async function run(args: string[], opts: { colour?: boolean; stdin?: string } = {}) {
  const { io, stdout, stderr } = fakeIo({ stdoutTTY: true, stderrTTY: true, stdin: opts.stdin, env: { noColor: opts.colour === false } });
  const code = await main(['node', 'service', ...args, '--url', server.url], io);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** What a terminal would be told to do besides printing text and the CLI's own colours. */
function driving(text: string): string | null {
  const m = UNSAFE.exec(text.replace(SGR, ''));
  return m ? JSON.stringify(text.slice(Math.max(0, m.index - 20), m.index + 20)) : null;
}

beforeAll(async () => {
  dir = await tempDir('svc-terminal-');
  server = await startServer({ dataPath: join(dir.path, 'data') });
  const learned = await run(['learn', '--task', TASK, '--code', CODE, '--eval-score', '9', '--json']);
  expect(learned.code).toBe(0);
  const key = (JSON.parse(learned.stdout) as { pattern_key: string }).pattern_key;
  expect((await run(['learn', '--task', `resize images ${HOSTILE}`, '--code', 'x', '--eval-score', '8', '--json'])).code).toBe(0);
  expect((await run(['skills', 'register', key, `csv${HOSTILE}`, '--json'])).code).toBe(0);
});
afterAll(async () => {
  await server?.stop();
  await dir?.remove();
});

describe('service text on a terminal', () => {
  const key = async () => (JSON.parse((await run(['patterns', 'list', '--json'])).stdout) as { patterns: { key: string; task: string }[] })
    .patterns.find((p) => p.task === TASK)!.key;

  it.each([true, false])('every table and plain rendering shows stored controls as visible escapes (colour %s)', async (colour) => {
    const k = await key();
    const commands = [
      ['recall', 'parse a CSV file into rows'],
      ['recall', 'parse a CSV file into rows', '--explain'],
      ['patterns', 'list'],
      ['patterns', 'get', k],
      ['skills', 'search', `csv${HOSTILE}`],
    ];
    for (const args of commands) {
      const res = await run(args, { colour });
      expect(res.code, args.join(' ')).toBe(0);
      expect(driving(res.stdout), `${args.join(' ')} stdout`).toBeNull();
      expect(driving(res.stderr), `${args.join(' ')} stderr`).toBeNull();
      // The stored text is there, as visible escapes (a table cuts the end of long cells).
      expect(res.stdout, args.join(' ')).toContain(VISIBLE.slice(0, 20));
    }
    // A full rendering keeps every character of the text, escaped.
    expect((await run(['patterns', 'get', k], { colour })).stdout).toContain(`parse a CSV file ${VISIBLE} into rows`);
  });

  it('the CLI keeps its own colours on a terminal', async () => {
    const res = await run(['recall', 'parse a CSV file into rows']);
    expect(res.stdout).toMatch(SGR);
  });

  it('JSON output stays exact', async () => {
    const res = await run(['recall', 'parse a CSV file into rows', '--json']);
    const task = (JSON.parse(res.stdout) as { matches: { pattern: { task: string } }[] }).matches[0].pattern.task;
    expect(task).toBe(TASK);
    const get = await run(['patterns', 'get', await key(), '--json']);
    expect((JSON.parse(get.stdout) as { code: string }).code).toBe(CODE);
    expect(get.stdout).toContain('\u202e');
  });

  it('an error message that echoes the server is escaped too (a server whose messages carry controls)', async () => {
    const echoing = createServer((_req, res) => {
      res.writeHead(409, { 'content-type': 'application/json' })
        .end(JSON.stringify({ detail: `conflict with ${HOSTILE}`, code: 'conflict', errors: [{ path: 'task', message: `near ${HOSTILE}` }] }));
    });
    await new Promise<void>((resolve) => echoing.listen(0, '127.0.0.1', resolve));
    try {
      const { io, stderr } = fakeIo({ stdoutTTY: true, stderrTTY: true });
      const url = `http://127.0.0.1:${(echoing.address() as AddressInfo).port}`;
      const code = await main(['node', 'service', 'metrics', '--url', url], io);
      expect(code).toBe(1);
      expect(stderr.text).toContain(`conflict with ${VISIBLE}`);
      expect(driving(stderr.text)).toBeNull();
    } finally {
      await new Promise((resolve) => echoing.close(resolve));
    }
  });
});
