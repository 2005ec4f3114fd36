/**
 * The fenced command blocks of README.md and the docs/ pages, for test/docs/readme-commands.test.ts.
 *
 * Every ```sh / ```bash / ```shell / ```zsh / ```console block is a command block and runs
 * as written. An HTML comment on the line before the fence (blank lines allowed) may mark it:
 *   <!-- readme-test: server -->           starts a server that later blocks talk to: run in
 *                                          the background until GET $SERVICE_URL/v1/health answers
 *   <!-- readme-test: skip: <reason> -->   needs what a test machine lacks (docker, a hosted
 *                                          provider's key, your own database, minutes of CPU…);
 *                                          the reason is required and printed by the test
 * A fence with no language is refused: tag output or examples `text` (or their language).
 */

export const COMMAND_LANGUAGES = new Set(['sh', 'bash', 'shell', 'zsh', 'console']);

export type Marker = { kind: 'server' } | { kind: 'skip'; reason: string };

export interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  code: string;
  marker: Marker | null;
}

export class ReadmeFormatError extends Error {}

const MARKER = /^<!--\s*readme-test:\s*(.*?)\s*-->$/;

function parseMarker(text: string, at: string): Marker {
  if (text === 'server') return { kind: 'server' };
  const skip = /^skip:\s*(\S.*)$/.exec(text);
  if (skip) return { kind: 'skip', reason: skip[1] };
  throw new ReadmeFormatError(`${at}: unknown marker "readme-test: ${text}" (use "server" or "skip: <reason>")`);
}

/** Every fenced block of the document, command blocks with their marker. */
export function readmeBlocks(markdown: string, file = 'README.md'): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  let pending: { marker: Marker; line: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const trimmed = lines[i].trim();
    const open = /^(`{3,}|~{3,})\s*([\w-]*)/.exec(trimmed);
    if (!open) {
      const marker = MARKER.exec(trimmed);
      if (marker) pending = { marker: parseMarker(marker[1], `${file}:${i + 1}`), line: i + 1 };
      else if (trimmed !== '') {
        if (pending) throw new ReadmeFormatError(`${file}:${pending.line}: a readme-test marker must come right before a command block`);
      }
      continue;
    }
    const fence = open[1];
    const language = open[2].toLowerCase();
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i].trim().startsWith(fence); i++) body.push(lines[i]);
    if (i >= lines.length) throw new ReadmeFormatError(`${file}:${start + 1}: the fenced block never closes`);
    if (language === '') throw new ReadmeFormatError(`${file}:${start + 1}: a fenced block without a language (tag commands sh, anything else text)`);
    if (!COMMAND_LANGUAGES.has(language)) {
      if (pending) throw new ReadmeFormatError(`${file}:${pending.line}: a readme-test marker before a ${language} block`);
      continue;
    }
    // An indented block (in a list) keeps its commands, not the indentation.
    const indent = Math.min(...body.filter((l) => l.trim() !== '').map((l) => /^\s*/.exec(l)![0].length));
    blocks.push({ line: start + 1, language, code: body.map((l) => l.slice(Number.isFinite(indent) ? indent : 0)).join('\n'), marker: pending?.marker ?? null });
    pending = null;
  }
  if (pending) throw new ReadmeFormatError(`${file}:${pending.line}: a readme-test marker with no command block after it`);
  return blocks;
}
