import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/**
 * The guard behind "a route's path is written once": outside the route table
 * (src/contracts/routes.ts) and the tests, no code spells an API path. It reads the tokens of
 * each file (string literals, template parts, JSX text; comments are not code) and reports
 * every one that holds `/v1/`.
 */
const API_PATH = '/v1/';

/** `file:line: the literal` for every API path spelt out in `text`. */
export function pathLiterals(fileName: string, text: string): string[] {
  const jsx = fileName.endsWith('.tsx');
  const found: string[] = [];
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, jsx ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node) || ts.isJsxText(node)) {
      if (node.text.includes(API_PATH)) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push(`${fileName}:${line}: ${node.text.trim()}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every .ts/.tsx file under the given folders of `root`, relative to it. */
export function sourceFiles(root: string, folders: string[]): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) files.push(relative(root, path));
    }
  };
  for (const folder of folders) walk(join(root, folder));
  return files;
}

/** The API paths spelt out in the given folders of `root`. */
export function pathLiteralsUnder(root: string, folders: string[]): string[] {
  return sourceFiles(root, folders).flatMap((file) => pathLiterals(file, readFileSync(join(root, file), 'utf8')));
}
