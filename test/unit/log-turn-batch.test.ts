import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TurnBatch } from '../../src/adapters/logging/turn-batch.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('log lines batched per turn of the event loop', () => {
  it('lines of one turn go out in one write, in order, at the end of the turn', async () => {
    const writes: string[] = [];
    const batch = new TurnBatch({ write: (text) => writes.push(text) });
    batch.write('a\n');
    batch.write('b\n');
    batch.write('c\n');
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual(['a\nb\nc\n']);
    batch.write('d\n');
    await nextTurn();
    expect(writes).toEqual(['a\nb\nc\n', 'd\n']);
  });

  it('flush writes what is pending at once, and nothing when nothing is', () => {
    const writes: string[] = [];
    const batch = new TurnBatch({ write: (text) => writes.push(text) });
    batch.flush();
    batch.write('x\n');
    batch.flush();
    expect(writes).toEqual(['x\n']);
  });

  it("a process that logs and exits in the same turn still writes the line (the process's logger, on stderr)", () => {
    // The built logger (tests run after `npm run build`, as the CLI tests do).
    const logger = fileURLToPath(new URL('../../dist/src/adapters/logging/logger.js', import.meta.url));
    const script = `
      import { createLogger } from ${JSON.stringify(logger)};
      const log = createLogger({ level: 'info', json: true });
      log.info('first line');
      log.error({ code: 7 }, 'last words');
      process.exit(3);
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: fileURLToPath(new URL('../..', import.meta.url)) });
    expect(child.status).toBe(3);
    const lines = child.stderr.trim().split('\n').map((l) => JSON.parse(l) as { msg: string; code?: number });
    expect(lines.map((l) => l.msg)).toEqual(['first line', 'last words']);
    expect(lines[1].code).toBe(7);
  });
});
