import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createInt8Dots, RELAXED_SIMD_FLAG, relaxedInt8Works, sharedInt8Modules } from '../../src/adapters/storage/json/engine/int8-kernel.js';
import { wasm } from '../../src/adapters/storage/json/engine/dot-kernel.js';

/**
 * The relaxed int8 kernel is used only where the runtime offers relaxed SIMD as it is: choosing
 * a kernel flips no process-wide V8 flag (docs/behavior.md "Storages").
 * On Node 20 the operator may offer it by starting Node with the flag themselves.
 */

/**
 * The smallest module using relaxed SIMD: one function, i16x8.relaxed_dot_i8x16_i7x16_s of two
 * zero vectors. Written out here, independent of the kernels, so it tells what the runtime offers.
 */
const V128_ZERO = [0xfd, 0x0c, ...new Array<number>(16).fill(0)];
const BODY = [0x00, ...V128_ZERO, ...V128_ZERO, 0xfd, 0x92, 0x02, 0x0b];
const RELAXED_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // type: () -> v128
  0x03, 0x02, 0x01, 0x00, // one function of that type
  0x0a, BODY.length + 2, 0x01, BODY.length, ...BODY,
]);

/** What the process offered before any kernel was chosen (nothing above has run one yet). */
const offeredAtStart = wasm.validate(RELAXED_PROBE);

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KERNEL = new URL('../../src/adapters/storage/json/engine/int8-kernel.ts', import.meta.url).href;
const LOADER = new URL('../../scripts/ts-source-loader.mjs', import.meta.url).href;

describe('JSON vector index: the relaxed int8 kernel and the runtime', () => {
  it('choosing a kernel leaves the runtime as it was: relaxed only where it is offered without a flag', () => {
    const chosen = createInt8Dots(new wasm.Memory({ initial: 1 })).query;
    sharedInt8Modules();
    expect(wasm.validate(RELAXED_PROBE)).toBe(offeredAtStart);
    if (!offeredAtStart) {
      expect(relaxedInt8Works()).toBe(false);
      expect(chosen).toBe('i16');
    }
  });

  // Node 20: relaxed SIMD is behind a V8 flag, which only the operator sets (on the node command line).
  it.skipIf(offeredAtStart)('a Node started with the relaxed SIMD flag takes the relaxed kernel where it scores right', () => {
    const script = [
      `import { createInt8Dots, int8KnownAnswersHold, relaxedInt8Works } from ${JSON.stringify(KERNEL)};`,
      'const memory = new WebAssembly.Memory({ initial: 1 });',
      'console.log(JSON.stringify({',
      '  relaxed: relaxedInt8Works(),',
      "  right: int8KnownAnswersHold((m) => createInt8Dots(m).dots, createInt8Dots(memory).query),",
      '  layout: createInt8Dots(memory).query,',
      '}));',
    ].join('\n');
    const child = spawnSync(process.execPath, [RELAXED_SIMD_FLAG, '--import', LOADER, '--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(child.status, child.stderr).toBe(0);
    const seen = JSON.parse(child.stdout.trim()) as { relaxed: boolean; right: boolean; layout: string };
    expect(seen.right).toBe(true);
    expect(seen.layout).toBe(seen.relaxed ? 'offset-u8' : 'i16');
    // x64 and arm64 engines compute the instruction as the kernel needs (the known answers hold).
    if (process.arch === 'x64' || process.arch === 'arm64') expect(seen.relaxed).toBe(true);
  });
});
