/** The README block reader of test/docs/readme-commands.test.ts: what runs, what is refused. */
import { describe, expect, it } from 'vitest';
import { ReadmeFormatError, readmeBlocks } from '../support/readme-blocks.js';

const fence = '```';

describe('readmeBlocks', () => {
  it('returns command blocks with their markers, in order; other languages are not commands', () => {
    const blocks = readmeBlocks([
      '# T', '', '<!-- readme-test: server -->', `${fence}sh`, 'npx service serve', fence, '',
      `${fence}ts`, 'const x = 1;', fence,
      '<!-- readme-test: skip: needs docker -->', '', `${fence}bash`, 'docker compose up', fence,
      '- in a list:', '', `  ${fence}console`, '  $ npx service health', '  ok', `  ${fence}`,
      `${fence}text`, 'output', fence,
    ].join('\n'));
    expect(blocks).toEqual([
      { line: 4, language: 'sh', code: 'npx service serve', marker: { kind: 'server' } },
      { line: 13, language: 'bash', code: 'docker compose up', marker: { kind: 'skip', reason: 'needs docker' } },
      { line: 18, language: 'console', code: '$ npx service health\nok', marker: null },
    ]);
  });

  it('refuses a fence without a language, an unknown marker, a skip without a reason and a stray marker', () => {
    const cases = [
      [fence, 'ls', fence],
      ['<!-- readme-test: later -->', `${fence}sh`, 'ls', fence],
      ['<!-- readme-test: skip: -->', `${fence}sh`, 'ls', fence],
      ['<!-- readme-test: skip: why -->', 'some text', `${fence}sh`, 'ls', fence],
      ['<!-- readme-test: skip: why -->', `${fence}json`, '{}', fence],
      ['<!-- readme-test: server -->'],
      [`${fence}sh`, 'ls'],
    ];
    for (const lines of cases) expect(() => readmeBlocks(lines.join('\n')), lines.join(' | ')).toThrow(ReadmeFormatError);
  });
});
