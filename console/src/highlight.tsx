/**
 * A small syntax highlighter for the code of a pattern (Python, JavaScript/TypeScript, shell
 * and the like): comments, strings, numbers and common keywords get a class each. Text is
 * rendered as text nodes (never as HTML), so code from the store cannot inject markup.
 */
const KEYWORDS = new Set(
  (
    'def class return if elif else for while in not and or import from as with try except finally raise lambda yield ' +
    'pass break continue None True False async await function const let var new this typeof instanceof export default ' +
    'switch case throw catch interface type extends implements public private static null undefined true false echo fi then do done'
  ).split(' '),
);

const TOKEN = new RegExp(
  [
    '(?<comment>#[^\\n]*|//[^\\n]*|/\\*[\\s\\S]*?\\*/)',
    '(?<string>"""[\\s\\S]*?"""|\'\'\'[\\s\\S]*?\'\'\'|"(?:\\\\.|[^"\\\\\\n])*"|\'(?:\\\\.|[^\'\\\\\\n])*\'|`(?:\\\\.|[^`\\\\])*`)',
    '(?<number>\\b\\d+(?:\\.\\d+)?\\b)',
    '(?<word>\\b[A-Za-z_][A-Za-z0-9_]*\\b)',
  ].join('|'),
  'g',
);

export interface Token {
  kind: 'comment' | 'string' | 'number' | 'keyword' | 'text';
  text: string;
}

export function tokenize(code: string): Token[] {
  const tokens: Token[] = [];
  let last = 0;
  for (const match of code.matchAll(TOKEN)) {
    const groups = match.groups ?? {};
    const kind = groups.comment ? 'comment' : groups.string ? 'string' : groups.number ? 'number' : KEYWORDS.has(match[0]) ? 'keyword' : 'text';
    if (kind === 'text') continue;
    if (match.index > last) tokens.push({ kind: 'text', text: code.slice(last, match.index) });
    tokens.push({ kind, text: match[0] });
    last = match.index + match[0].length;
  }
  if (last < code.length) tokens.push({ kind: 'text', text: code.slice(last) });
  return tokens;
}

export function Code({ code, label }: { code: string; label: string }) {
  return (
    <pre class="code" aria-label={label} tabIndex={0}>
      <code>{tokenize(code).map((t, i) => (t.kind === 'text' ? t.text : <span key={i} class={`tok-${t.kind}`}>{t.text}</span>))}</code>
    </pre>
  );
}
