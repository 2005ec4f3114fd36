import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { z } from 'zod';

/**
 * The guard behind "wire types have one source": a service may not declare its own copy of a
 * type the contracts (src/contracts/*.ts) already define. A copy is an exported interface or
 * type alias of a service that either bears the name of something a contract module exports,
 * or has exactly the properties of one of the contracts' object schemas (the exported ones
 * and the objects nested in them). Services use the contracts' z.input/z.output types instead.
 */

export interface ContractIndex {
  /** Every name a contract module exports (schemas, types, helpers). */
  names: Set<string>;
  /** Sorted, comma-joined key set of each object schema → where schemas of that shape are defined. */
  shapes: Map<string, string[]>;
}

/** One service source: its path (inside src/services/ for its imports to resolve) and optionally its text. */
export interface ServiceSource {
  path: string;
  text?: string;
}

const keySet = (keys: Iterable<string>) => [...keys].sort().join(',');

/** Names exported by a contract file, read from its syntax (type-only exports have no runtime value). */
export function exportedNames(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true);
  const names: string[] = [];
  for (const statement of source.statements) {
    const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) continue;
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text);
    } else if (
      (ts.isTypeAliasDeclaration(statement) || ts.isInterfaceDeclaration(statement) || ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) || ts.isEnumDeclaration(statement)) && statement.name
    ) {
      names.push(statement.name.text);
    }
  }
  return names;
}

/** Object schemas inside a schema: through optional, nullable, default, pipes, arrays, unions and object fields. */
function collectObjects(schema: z.ZodType, where: string, into: Map<string, string[]>, seen = new Set<unknown>()): void {
  if (seen.has(schema)) return;
  seen.add(schema);
  if (schema instanceof z.ZodObject) {
    const shape = schema.shape as Record<string, z.ZodType>;
    const keys = keySet(Object.keys(shape));
    if (keys !== '') into.set(keys, [...(into.get(keys) ?? []), where]);
    for (const [field, inner] of Object.entries(shape)) collectObjects(inner, `${where}.${field}`, into, seen);
    return;
  }
  // Wrappers keep what they wrap in their definition (zod 4: innerType, in/out, element, options).
  const def = schema._zod.def as unknown as Record<string, unknown>;
  const inner = [def.innerType, def.in, def.out, def.element, ...(Array.isArray(def.options) ? def.options : [])];
  for (const next of inner) if (next instanceof z.ZodType) collectObjects(next, where, into, seen);
}

/** Indexes what the contract modules (by file name → module namespace) export. */
export function indexContracts(modules: Record<string, Record<string, unknown>>, texts: Record<string, string>): ContractIndex {
  const names = new Set<string>();
  const shapes = new Map<string, string[]>();
  for (const [file, text] of Object.entries(texts)) for (const name of exportedNames(file, text)) names.add(name);
  for (const [file, module] of Object.entries(modules)) {
    for (const [name, value] of Object.entries(module)) {
      names.add(name);
      if (value instanceof z.ZodType) collectObjects(value, `${file} ${name}`, shapes);
    }
  }
  return { names, shapes };
}

function compilerOptions(root: string, tsconfig: string): ts.CompilerOptions {
  const config = ts.readConfigFile(join(root, tsconfig), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, join(root, tsconfig, '..'));
  return { ...parsed.options, noEmit: true, declaration: false, sourceMap: false };
}

/**
 * What is wrong with the services' exported types: one line per interface or type alias that
 * copies a contract by name or by property set. Property sets come from the type checker, so
 * `extends`, intersections, Pick and Omit count as well as literal members.
 */
export function wireTypeViolations(root: string, sources: ServiceSource[], contracts: ContractIndex, tsconfig = 'tsconfig.json'): string[] {
  const options = compilerOptions(root, tsconfig);
  const virtual = new Map(sources.filter((s) => s.text !== undefined).map((s) => [resolve(s.path), s.text!]));
  const host = ts.createCompilerHost(options, true);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (name, language, ...rest) => {
    const text = virtual.get(resolve(name));
    return text === undefined ? getSourceFile(name, language, ...rest) : ts.createSourceFile(name, text, language, true);
  };
  host.fileExists = (name) => virtual.has(resolve(name)) || fileExists(name);
  host.readFile = (name) => virtual.get(resolve(name)) ?? readFile(name);

  const program = ts.createProgram(sources.map((s) => resolve(s.path)), options, host);
  const checker = program.getTypeChecker();
  const violations: string[] = [];
  for (const { path } of sources) {
    const source = program.getSourceFile(resolve(path));
    if (!source) throw new Error(`${path} was not loaded`);
    for (const statement of source.statements) {
      if (!ts.isInterfaceDeclaration(statement) && !ts.isTypeAliasDeclaration(statement)) continue;
      if (!ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
      const name = statement.name.text;
      const at = `${path.replace(`${root}/`, '')}: ${name}`;
      if (contracts.names.has(name)) {
        violations.push(`${at} has the name of a contract export: import the contract's type instead`);
        continue;
      }
      const type = checker.getTypeAtLocation(statement.name);
      // Only object types have a property set worth comparing (not unions of literals, say).
      if (!(type.flags & ts.TypeFlags.Object) && !type.isIntersection()) continue;
      const keys = keySet(checker.getPropertiesOfType(type).map((p) => p.name));
      const copied = contracts.shapes.get(keys);
      if (copied) violations.push(`${at} has exactly the fields of ${copied.join(' or ')} {${keys}}: use the contract's type`);
    }
  }
  return violations;
}

/**
 * The repository's files that use the contracts (services, the client, the console, each
 * compiled with its own tsconfig) and the contract modules, as the real check reads them.
 */
export async function repositoryInputs(root: string): Promise<{
  services: ServiceSource[]; client: ServiceSource[]; console: ServiceSource[]; contracts: ContractIndex;
}> {
  const ts_ = (dir: string) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.ts')).sort().map((f) => join(root, dir, f));
  const contractFiles = ts_('src/contracts');
  const modules: Record<string, Record<string, unknown>> = {};
  const texts: Record<string, string> = {};
  for (const file of contractFiles) {
    const rel = file.replace(`${root}/`, '');
    modules[rel] = (await import(file)) as Record<string, unknown>;
    texts[rel] = readFileSync(file, 'utf8');
  }
  const consoleFiles = (dir: string): string[] => readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? consoleFiles(join(dir, entry.name)) : /\.tsx?$/.test(entry.name) ? [join(root, dir, entry.name)] : []);
  return {
    services: ts_('src/services').map((path) => ({ path })),
    client: ts_('src/client').filter((path) => !path.endsWith('.d.ts')).map((path) => ({ path })),
    console: consoleFiles('console/src').sort().map((path) => ({ path })),
    contracts: indexContracts(modules, texts),
  };
}
