// Bundles the command line (dist/commands/entry.js and everything it imports, at once or on
// demand) into dist/cli/: one module graph split into chunks, so `service recall` reads a
// handful of files instead of ~70 and each command still loads only what it needs. The
// packages on that path (commander, chalk, undici) are bundled too; every other package stays
// an import of node_modules. dist/cli/meta.json records which sources each chunk holds (the
// start-up test reads it to prove what a command loads).
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { build } from 'esbuild';

const BUNDLED_PACKAGES = new Set(['commander', 'chalk', 'undici']);

/** The package a bare specifier names (`@scope/name/x` → `@scope/name`). */
function packageOf(spec) {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

const keepPackagesOutside = {
  name: 'keep-packages-outside',
  setup(b) {
    // Bare specifiers only: relative paths are our files, `#x` are a package's own imports.
    b.onResolve({ filter: /^[^./#]/ }, (args) => {
      if (args.path.startsWith('node:')) return { external: true };
      return BUNDLED_PACKAGES.has(packageOf(args.path)) ? undefined : { external: true };
    });
  },
};

/**
 * Source edits that defer a package's require() of something the CLI's common path never
 * uses. Each names the exact line it replaces: if a new version of the package changes that
 * line, the build fails here rather than silently losing the saving.
 */
const DEFERRED_REQUIRES = [
  {
    // undici's client loads its HTTP/2 half at once, which pulls node:http2, node:tls and
    // node:crypto (about 40 built-in modules) into every call. We never offer h2 (allowH2 is
    // off), so it is required on first use instead.
    file: /undici[\\/]lib[\\/]dispatcher[\\/]client\.js$/,
    line: "const connectH2 = require('./client-h2.js')",
    lazy: "let h2Impl; const connectH2 = (...a) => (h2Impl ??= require('./client-h2.js'))(...a)",
  },
  {
    // commander spawns a process only for stand-alone executable subcommands, which this CLI
    // does not have; node:child_process (with node:dgram and node:net's socket list) waits for it.
    file: /commander[\\/]lib[\\/]command\.js$/,
    line: "const childProcess = require('node:child_process');",
    lazy: "const childProcess = { spawn: (...a) => require('node:child_process').spawn(...a) };",
  },
];

const deferRequires = {
  name: 'defer-requires',
  setup(b) {
    for (const edit of DEFERRED_REQUIRES) {
      b.onLoad({ filter: edit.file }, (args) => {
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes(edit.line)) throw new Error(`${args.path} no longer contains "${edit.line}": update scripts/bundle-cli.mjs`);
        return { contents: source.replace(edit.line, edit.lazy), loader: 'js' };
      });
    }
  },
};

/**
 * Bundles `<outName>/commands/entry.js` (the compiled sources, `outName` a folder in `root`
 * that becomes dist/ once the build is done) into `<outName>/cli`.
 */
export async function bundleCli(root, outName = 'dist') {
  const out = join(root, outName);
  const result = await build({
    entryPoints: { entry: join(out, 'commands', 'entry.js') },
    outdir: join(out, 'cli'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    metafile: true,
    // Bundled CommonJS (undici, commander) calls require() for built-ins; ESM has none.
    banner: { js: "import { createRequire as __cliRequire } from 'node:module'; const require = __cliRequire(import.meta.url);" },
    plugins: [keepPackagesOutside, deferRequires],
  });
  // The JSON store's scan thread starts its worker by URL, './scan-worker.js' beside the module
  // that starts it (src/adapters/storage/json/engine/scan-thread.ts), which is now one of the
  // chunks here: the worker is bundled beside them, a file of its own.
  await build({
    entryPoints: { 'scan-worker': join(out, 'src', 'adapters', 'storage', 'json', 'engine', 'scan-worker.js') },
    outdir: join(out, 'cli'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    plugins: [keepPackagesOutside],
  });
  // Sources are named as they will be found once installed: dist/commands/recall.js.
  const asInstalled = (p) => {
    const rel = relative(root, resolve(p)).split('\\').join('/');
    return rel.startsWith(`${outName}/`) ? `dist/${rel.slice(outName.length + 1)}` : rel;
  };
  const chunks = {};
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    chunks[file.split('/').pop()] = {
      sources: Object.keys(output.inputs).map(asInstalled),
      imports: output.imports.filter((i) => i.external).map((i) => i.path),
    };
  }
  writeFileSync(join(out, 'cli', 'meta.json'), JSON.stringify(chunks, null, 1) + '\n');
}
