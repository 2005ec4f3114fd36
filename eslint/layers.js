import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The layer rule (docs/behavior.md "Layers"): which project folders and packages a file may
 * import, judged on the RESOLVED path, so a file's depth and the spelling of the specifier
 * (`../adapters/x.js`, `../../src/adapters/x.js`) never matter. Checks static imports,
 * `export … from`, dynamic `import()` and type-level `import('…')`; a dynamic import whose
 * specifier is computed is refused outside the code that may import adapters.
 *
 * Paths below are relative to the repository root. Specifiers resolve with their extension
 * dropped, so `x.js` in an import names the `x.ts` source.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where adapters may be imported from: adapters themselves, the composition root, and tooling. */
const ADAPTER_IMPORTERS = ['src/adapters/', 'src/app', 'test/', 'bench/', 'scripts/'];

/**
 * Per layer: the project paths it may import (prefixes), the packages it may import
 * (undefined = any), type-only exceptions, and what to do instead.
 */
const LAYERS = [
  {
    layer: 'src/contracts/',
    project: ['src/contracts/', 'src/core/vocabulary', 'src/core/error-table'],
    packages: ['zod'],
    advice:
      'contracts hold zod schemas only: import zod and other contracts; a constant list shared with core belongs in src/core/vocabulary.ts (error codes: src/core/error-table.ts)',
  },
  {
    layer: 'src/core/',
    project: ['src/core/'],
    packages: [],
    advice: 'core is pure and self-contained: no packages, no other layer; move I/O behind a port and call it from a service',
  },
  {
    layer: 'src/ports/',
    project: ['src/core/', 'src/ports/', 'src/contracts/'],
    advice: 'ports are interfaces over core types: import only core, ports and contracts; adapters implement ports, never the reverse',
  },
  {
    layer: 'src/services/',
    project: ['src/core/', 'src/ports/', 'src/contracts/', 'src/services/'],
    typeOnly: ['src/config/'],
    advice:
      'services use core, ports, contracts and other services; reach adapters through a port in ServiceDeps (wired in src/app.ts), settings through deps.config (import type { Config } only)',
  },
  {
    layer: 'src/adapters/storage/json/engine/',
    project: ['src/core/', 'src/adapters/storage/json/engine/'],
    advice:
      'the JSON store\'s search engine (json/engine/) uses only core and itself: it knows no repository, file or journal; the repositories pass in what it needs',
  },
  {
    layer: 'src/adapters/storage/json/durable/',
    project: ['src/adapters/storage/json/durable/'],
    advice:
      'the JSON store\'s durability layer (json/durable/) is domain-free (files, logs, replay, the lock): it imports no core type, repository or engine; the repositories hand it lines and bytes',
  },
];

/**
 * Folders that some importers may enter only through one public module (a folder's own files
 * import each other freely): the CLI uses the client exactly as the package's library users
 * do, so whatever it needs is exported there; the JSON store's repositories use the search
 * engine through its documented interface only (tests and benchmarks may reach inside).
 */
const PUBLIC_ENTRIES = [
  {
    importers: ['commands/', 'server/'],
    folder: 'src/client/',
    entry: 'src/client/index',
    advice: 'commands use the public client: import from src/client/index.js, as server/ does (export what is missing there, for library users too)',
  },
  {
    importers: ['src/', 'server/', 'commands/'],
    folder: 'src/adapters/storage/json/engine/',
    entry: 'src/adapters/storage/json/engine/index',
    advice: 'the search engine is entered through src/adapters/storage/json/engine/index.js, its documented interface: export what is missing there',
  },
];

const ADAPTER_ADVICE =
  'only src/app.ts wires adapters: declare what you need as a port (src/ports), let src/app.ts build the adapter, and take it from App or ServiceDeps';

function strip(file) {
  return file.replace(/\.(d\.ts|ts|js|mjs|cjs)$/, '');
}

function under(rel, prefixes) {
  return prefixes.some((p) => (p.endsWith('/') ? rel.startsWith(p) : rel === p));
}

function packageName(spec) {
  if (spec.startsWith('node:')) return spec;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** What an import of `spec` from `file` breaks, or null. */
export function layerViolation(file, spec, typeOnly) {
  const from = path.relative(ROOT, file).split(path.sep).join('/');
  if (from.startsWith('..')) return null;
  const rules = LAYERS.find((l) => from.startsWith(l.layer));
  if (!spec.startsWith('.')) {
    if (!rules?.packages) return null;
    const name = packageName(spec);
    return rules.packages.includes(name) ? null : `${from} may not import the package "${name}": ${rules.advice}`;
  }
  const target = strip(path.relative(ROOT, path.resolve(path.dirname(file), spec)).split(path.sep).join('/'));
  if (target.startsWith('..')) return null;
  if (target.startsWith('src/adapters/') && !under(strip(from), ADAPTER_IMPORTERS)) {
    return `${from} may not import ${target}: ${ADAPTER_ADVICE}`;
  }
  const entry = PUBLIC_ENTRIES.find((e) => target.startsWith(e.folder) && target !== e.entry && under(from, e.importers) && !from.startsWith(e.folder));
  if (entry) return `${from} may not import ${target}: ${entry.advice}`;
  if (!rules || under(target, rules.project)) return null;
  if (rules.typeOnly && under(target, rules.typeOnly)) {
    return typeOnly ? null : `${from} may import only types from ${target} (use "import type"): ${rules.advice}`;
  }
  return `${from} may not import ${target}: ${rules.advice}`;
}

function isTypeOnlyDeclaration(node) {
  if (node.importKind === 'type' || node.exportKind === 'type') return true;
  const specifiers = node.specifiers ?? [];
  return specifiers.length > 0 && specifiers.every((s) => s.importKind === 'type' || s.exportKind === 'type');
}

/** A dynamic import's specifier when it is written out (a string or a template without holes). */
function literalOf(source) {
  if (source.type === 'Literal') return source;
  if (source.type === 'TemplateLiteral' && source.expressions.length === 0) return { value: source.quasis[0].value.cooked };
  return null;
}

/**
 * What a dynamic import with a computed specifier (`import(name)`, a template with holes)
 * breaks, or null: the rule cannot tell where it leads, so only files that may import
 * adapters anyway may compute one.
 */
export function computedImportViolation(file) {
  const from = path.relative(ROOT, file).split(path.sep).join('/');
  if (from.startsWith('..') || under(strip(from), ADAPTER_IMPORTERS)) return null;
  return `${from} imports a computed specifier, which the layer rule cannot check: write the path out (import('./x.js'))`;
}

const layersRule = {
  meta: {
    type: 'problem',
    docs: { description: 'Enforce the import direction between layers (src/contracts, core, ports, services, adapters)' },
    schema: [],
    messages: { layer: '{{detail}}' },
  },
  create(context) {
    const file = context.physicalFilename ?? context.filename;
    const check = (node, source, typeOnly) => {
      if (!source || typeof source.value !== 'string') return;
      const detail = layerViolation(file, source.value, typeOnly);
      if (detail) context.report({ node, messageId: 'layer', data: { detail } });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source, isTypeOnlyDeclaration(node)),
      ExportNamedDeclaration: (node) => check(node, node.source, isTypeOnlyDeclaration(node)),
      ExportAllDeclaration: (node) => check(node, node.source, node.exportKind === 'type'),
      ImportExpression: (node) => {
        const literal = literalOf(node.source);
        if (literal) return check(node, literal, false);
        const detail = computedImportViolation(file);
        if (detail) context.report({ node, messageId: 'layer', data: { detail } });
      },
      TSImportType: (node) => check(node, node.argument?.literal ?? node.source ?? null, true),
    };
  },
};

export const layersPlugin = { rules: { layers: layersRule } };
