import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { sourceFiles } from './path-literals.js';

/**
 * Value imports between the files of a tree (type-only imports left out: they vanish at run
 * time), as `file → files it imports`, paths relative to the root.
 */
export function valueImports(root: string, folders: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(root, folders)) {
    const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.ES2022, true);
    const targets: string[] = [];
    for (const statement of source.statements) {
      const spec = (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)
        ? statement.moduleSpecifier.text : null;
      if (spec === null || !spec.startsWith('.')) continue;
      if (ts.isImportDeclaration(statement) && (statement.importClause?.isTypeOnly || onlyTypes(statement.importClause))) continue;
      if (ts.isExportDeclaration(statement) && statement.isTypeOnly) continue;
      const target = relative(root, resolve(root, dirname(file), spec)).replace(/\.js$/, '.ts');
      if (existsSync(join(root, target))) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

function onlyTypes(clause: ts.ImportClause | undefined): boolean {
  if (!clause || clause.name) return false;
  const bindings = clause.namedBindings;
  return bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

/** Pairs of files that import each other (directly), each as `a <-> b`. */
export function mutualImports(graph: Map<string, string[]>): string[] {
  const pairs: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) if (file < target && graph.get(target)?.includes(file)) pairs.push(`${file} <-> ${target}`);
  }
  return pairs.sort();
}

/** Pairs of folders whose files import each other's (in either direction, any files). */
export function mutualFolders(graph: Map<string, string[]>, folders: string[]): string[] {
  const folderOf = (file: string) => folders.find((f) => file.startsWith(`${f}/`));
  const edges = new Set<string>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    for (const target of targets) {
      const to = folderOf(target);
      if (from && to && from !== to) edges.add(`${from} -> ${to}`);
    }
  }
  return folders.flatMap((a) => folders.filter((b) => a < b && edges.has(`${a} -> ${b}`) && edges.has(`${b} -> ${a}`)).map((b) => `${a} <-> ${b}`));
}
