// Builds the agent-memory-client package from the repository's own src/client (the code the
// CLI and the server's MCP endpoint use: there is no copy). Into dist/:
//  - index.js (+ chunks): src/client bundled with everything it imports except undici, the
//    package's one dependency; the zod contracts the client checks answers with come along,
//    loaded only when an answer is checked, as in the repository;
//  - *.d.ts: the declarations tsc emits for src/client, where the contract types (zod
//    inferences in src/contracts) are written out as plain types in contracts.d.ts and the
//    little of zod's types the signatures name comes from zod.d.ts, so the package needs no
//    zod types either. The result is type-checked on its own before it replaces dist/.
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import ts from 'typescript';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const clientSrc = join(root, 'src', 'client');
const tmp = join(here, `.build-${process.pid}`);
const dist = join(here, 'dist');

const compilerOptions = {
  target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true, skipLibCheck: true, esModuleInterop: true, resolveJsonModule: true, types: ['node'],
};

function fail(message) {
  throw new Error(`agent-memory-client build: ${message}`);
}

function formatDiagnostics(diagnostics) {
  return ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => '\n' });
}

async function bundle() {
  await build({
    entryPoints: { index: join(clientSrc, 'index.ts') },
    outdir: tmp,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    external: ['undici', 'undici/*'],
    // Bundled CommonJS (zod is ESM; this is for any that is not) may call require().
    banner: { js: "import { createRequire as __clientRequire } from 'node:module'; const require = __clientRequire(import.meta.url);" },
  });
}

/** Emits the declarations of src/client; returns the program (its checker expands types). */
function emitDeclarations() {
  const program = ts.createProgram([join(clientSrc, 'index.ts'), join(clientSrc, 'undici-internals.d.ts')], {
    // stripInternal: the route-table plumbing (ApiClient.call and its kin, @internal) names
    // generic zod types the package's declarations cannot carry; the typed methods are the API.
    ...compilerOptions, declaration: true, emitDeclarationOnly: true, stripInternal: true, outDir: join(tmp, 'types'), rootDir: root,
  });
  const result = program.emit();
  const errors = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics].filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) fail(`src/client does not compile:\n${formatDiagnostics(errors)}`);
  return program;
}

const OUTSIDE = /(['"])\.\.\/(contracts|core)\/([\w-]+)\.js\1/g;

/**
 * Moves the client's declarations to the top of the package and points their imports of
 * ../contracts and ../core at ./contracts.js; returns the names they import from there.
 */
function rewriteClientDeclarations(program) {
  const wanted = new Map(); // name -> module file (src/contracts/x.ts)
  const checker = program.getTypeChecker();
  const dir = join(tmp, 'types', 'src', 'client');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.d.ts'))) {
    let text = readFileSync(join(dir, file), 'utf8');
    // export type * from '../contracts/x.js': every type the module exports, by name.
    text = text.replace(/export type \* from (['"])\.\.\/(contracts|core)\/([\w-]+)\.js\1;/g, (_m, q, area, mod) => {
      const source = join(root, 'src', area, `${mod}.ts`);
      const names = typeExportsOf(program, checker, source);
      for (const name of names) noteWanted(wanted, name, source);
      return `export type { ${names.join(', ')} } from ${q}./contracts.js${q};`;
    });
    // import type { A, B as C } from '../contracts/x.js' (and export … from)
    text = text.replace(/(import|export)( type)? \{([^}]*)\} from (['"])\.\.\/(contracts|core)\/([\w-]+)\.js\4/g, (_m, kw, type, names, q, area, mod) => {
      for (const part of names.split(',').map((s) => s.trim()).filter(Boolean)) {
        const name = part.replace(/^type\s+/, '').split(/\s+as\s+/)[0];
        noteWanted(wanted, name, join(root, 'src', area, `${mod}.ts`));
      }
      return `${kw}${type ?? ''} {${names}} from ${q}./contracts.js${q}`;
    });
    text = text.replace(/import\((['"])\.\.\/(contracts|core)\/([\w-]+)\.js\1\)\.(\w+)/g, (_m, q, area, mod, name) => {
      noteWanted(wanted, name, join(root, 'src', area, `${mod}.ts`));
      return `import(${q}./contracts.js${q}).${name}`;
    });
    if (OUTSIDE.test(text)) fail(`${file}: an import of ../contracts or ../core this build does not understand`);
    text = text.replace(/from (['"])zod\1/g, "from './zod.js'");
    if (file === 'undici-internals.d.ts') continue;
    writeFileSync(join(tmp, file), text);
  }
  // The ambient declarations of undici internals are only needed to compile src/client.
  return wanted;
}

/** The names a module exports that are types (type aliases and interfaces; zod schemas' values are left out). */
function typeExportsOf(program, checker, file) {
  const source = program.getSourceFile(file) ?? fail(`${relative(root, file)} is not part of the client's program`);
  return checker.getExportsOfModule(checker.getSymbolAtLocation(source))
    .filter((s) => ((s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s).flags & (ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Interface)) !== 0)
    .map((s) => s.name)
    .sort();
}

function noteWanted(wanted, name, file) {
  const known = wanted.get(name);
  if (known !== undefined && known !== file) fail(`the type name ${name} comes from both ${known} and ${file}`);
  wanted.set(name, file);
}

/** contracts.d.ts: every contract or core type the client names, written out structurally. */
function writeContracts(program, wanted) {
  const checker = program.getTypeChecker();
  const exportsOf = new Map();
  const exportsOfFile = (file) => {
    if (!exportsOf.has(file)) {
      const source = program.getSourceFile(file) ?? fail(`${relative(root, file)} is not part of the client's program`);
      exportsOf.set(file, new Map(checker.getExportsOfModule(checker.getSymbolAtLocation(source)).map((s) => [s.name, s])));
    }
    return exportsOf.get(file);
  };
  const flags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias | ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType;
  const lines = [
    '// The contract types of the service API, written out by build.mjs from the zod contracts in',
    '// the repository\'s src/contracts (the server validates with the same ones).',
  ];
  const done = new Set();
  const queue = [...wanted.entries()];
  // Names of every exported type of contracts/ and core/, to follow a printed reference.
  const allFiles = program.getSourceFiles().map((s) => s.fileName).filter((f) => /\/src\/(contracts|core)\/[\w-]+\.ts$/.test(f));
  while (queue.length > 0) {
    const [name, file] = queue.shift();
    if (done.has(name)) continue;
    done.add(name);
    let symbol = exportsOfFile(file).get(name) ?? fail(`${relative(root, file)} exports no ${name}`);
    if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    let text;
    if (symbol.flags & ts.SymbolFlags.Interface) {
      // An interface prints as its own name: its declaration is copied (core's are plain TS).
      text = symbol.declarations.map((d) => d.getText()).join('\n');
      lines.push(text.startsWith('export ') ? text : `export ${text}`);
    } else if (symbol.flags & ts.SymbolFlags.TypeAlias) {
      text = checker.typeToString(checker.getDeclaredTypeOfSymbol(symbol), undefined, flags);
      lines.push(`export type ${name} = ${text};`);
    } else if (symbol.flags & (ts.SymbolFlags.Variable | ts.SymbolFlags.Function)) {
      // A value the client exports (the error table): its type, the value is in index.js.
      const declaration = symbol.valueDeclaration ?? fail(`${name} has no declaration`);
      text = checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, declaration), undefined, flags);
      lines.push(`export declare const ${name}: ${text};`);
    } else {
      fail(`src/client's declarations name ${name} of ${relative(root, file)}, which is neither a type nor a constant`);
    }
    // A printed type may still name another exported type (an alias of core/): bring it too.
    for (const [, ref] of text.matchAll(/\b([A-Z]\w*)\b/g)) {
      if (done.has(ref)) continue;
      const owner = allFiles.find((f) => exportsOfFile(f).has(ref));
      if (owner !== undefined) queue.push([ref, owner]);
    }
  }
  writeFileSync(join(tmp, 'contracts.d.ts'), lines.join('\n') + '\n');
}

/** The part of zod's types the client's signatures name (its own schemas are zod's). */
const ZOD_TYPES = `// The part of zod's types the client's signatures name: a schema is anything with parse()
// (zod's schemas are), and infer<> is what parse() returns.
export declare namespace z {
  interface ZodType<Output = unknown> {
    parse(data: unknown, ...rest: never[]): Output;
  }
  type infer<T> = T extends { parse(data: unknown, ...rest: never[]): infer O } ? O : never;
}
`;

function checkDeclarations() {
  const program = ts.createProgram([join(tmp, 'index.d.ts')], {
    ...compilerOptions, noEmit: true, skipLibCheck: false, typeRoots: [join(root, 'node_modules', '@types')],
  });
  const errors = ts.getPreEmitDiagnostics(program).filter((d) => d.category === ts.DiagnosticCategory.Error && d.file?.fileName.startsWith(tmp));
  if (errors.length > 0) fail(`the package's declarations do not type-check:\n${formatDiagnostics(errors)}`);
}

rmSync(tmp, { recursive: true, force: true });
mkdirSync(tmp, { recursive: true });
try {
  await bundle();
  const program = emitDeclarations();
  writeContracts(program, rewriteClientDeclarations(program));
  writeFileSync(join(tmp, 'zod.d.ts'), ZOD_TYPES);
  rmSync(join(tmp, 'types'), { recursive: true, force: true });
  checkDeclarations();
  rmSync(dist, { recursive: true, force: true });
  renameSync(tmp, dist);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
