import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../support/cli.js';
import { childEnv } from '../support/env.js';

/**
 * `learn --batch` interrupted: a Ctrl-C while lines are in flight must not lose them. Those
 * requests may already be stored, so they finish and are answered on stdout, then one stderr
 * line names the last line answered; no further line is sent. The server here is the test's
 * own: it holds every learn until the test has seen the CLI take the signal.
 */
interface Held {
  body: { task: string };
  res: ServerResponse;
}

let server: Server | null = null;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = null;
});

/** A fake service whose learns wait in `held` until released; `changed` fires on every arrival. */
async function holdingServer(options: { answerAtOnce?: boolean } = {}) {
  const held: Held[] = [];
  let changed = () => {};
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.setEncoding('utf8').on('data', (s: string) => (text += s)).on('end', () => {
      held.push({ body: JSON.parse(text) as { task: string }, res });
      if (options.answerAtOnce) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ stored: true, pattern_count: held.length, pattern_key: 'patterns/small' }));
      changed();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const until = (test: () => boolean) => new Promise<void>((resolve) => {
    changed = () => test() && resolve();
    changed();
  });
  return { url, held, untilHeld: (n: number) => until(() => held.length >= n) };
}

describe('learn --batch and SIGINT', () => {
  it('answers every line in flight after a SIGINT, sends no more, and names the last line answered', async () => {
    const fake = await holdingServer();
    const child = spawn(process.execPath, [BIN, 'learn', '--batch', '-', '--concurrency', '3', '--url', fake.url], {
      env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let exited = false;
    const watchers = new Set<() => void>();
    const notify = () => watchers.forEach((w) => w());
    child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s; notify(); });
    child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; notify(); });
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => { exited = true; notify(); resolve(code); }));
    const untilOutput = (test: () => boolean) => new Promise<void>((resolve) => {
      const check = () => (test() || exited) && resolve();
      watchers.add(check);
      check();
    });

    // Ten runs, stdin left open (a pipe that is still being written); three go out at once.
    for (let i = 1; i <= 10; i++) child.stdin.write(`${JSON.stringify({ task: `task ${i}`, code: 'x', eval_score: 8 })}\n`);
    await fake.untilHeld(3);
    child.kill('SIGINT');
    await untilOutput(() => stderr.includes('SIGINT received'));
    for (const [i, h] of fake.held.entries()) {
      h.res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ stored: true, pattern_count: i + 1, pattern_key: `patterns/held${i}` }));
    }
    const code = await closed;

    expect(fake.held.map((h) => h.body.task)).toEqual(['task 1', 'task 2', 'task 3']);
    const answers = stdout.trim().split('\n').map((l) => JSON.parse(l) as { line: number; result?: { pattern_key: string } });
    expect(answers).toEqual([
      { line: 1, result: expect.objectContaining({ stored: true, pattern_key: 'patterns/held0' }) },
      { line: 2, result: expect.objectContaining({ stored: true, pattern_key: 'patterns/held1' }) },
      { line: 3, result: expect.objectContaining({ stored: true, pattern_key: 'patterns/held2' }) },
    ]);
    expect(stderr).toMatch(/interrupted by SIGINT: every line up to line 3 is answered above; the lines after it were not sent/);
    expect(code).toBe(1);
  });
});

describe('--batch lines over the byte cap', () => {
  it('one clear error per oversize line, whatever its size, and nothing sent for it (default cap: the server\'s default body limit)', async () => {
    const fake = await holdingServer({ answerAtOnce: true });
    const run = (n: number) => JSON.stringify({ task: `run of ${n}`, code: 'c'.repeat(n), eval_score: 8 });
    const lines = [run(10), run(2_000_000), run(40_000_000), run(20)];
    const res = await runCli(['learn', '--batch', '-', '--url', fake.url], { input: lines.join('\n') });
    expect(fake.held.map((h) => h.body.task)).toEqual(['run of 10', 'run of 20']);
    const answers = res.stdout.trim().split('\n').map((l) => JSON.parse(l) as { line: number; result?: unknown; error?: unknown });
    expect(answers.map((a) => a.line)).toEqual([1, 2, 3, 4]);
    expect(answers[0].result).toMatchObject({ stored: true });
    for (const i of [1, 2]) {
      expect(answers[i].error).toEqual({
        message: `line is ${Buffer.byteLength(lines[i]).toLocaleString('en-US')} bytes, over the 1,048,576-byte limit of a --batch line (--max-line-bytes): not sent`,
        exit_code: 2,
      });
    }
    expect(answers[3].result).toMatchObject({ stored: true });
    expect(res.code).toBe(2);
  });

  it('--max-line-bytes sets the cap', async () => {
    const fake = await holdingServer({ answerAtOnce: true });
    const line = JSON.stringify({ task: 'big', code: 'c'.repeat(5000), eval_score: 8 });
    const res = await runCli(['learn', '--batch', '-', '--max-line-bytes', '4096', '--url', fake.url], { input: line });
    expect(fake.held).toEqual([]);
    expect(JSON.parse(res.stdout)).toEqual({
      line: 1,
      error: { message: `line is ${line.length.toLocaleString('en-US')} bytes, over the 4,096-byte limit of a --batch line (--max-line-bytes): not sent`, exit_code: 2 },
    });
  });
});
