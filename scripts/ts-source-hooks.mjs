// The module hooks of scripts/ts-source-loader.mjs (they run on Node's loader thread).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

const isSource = (url) => url.startsWith('file:') && url.endsWith('.ts') && !url.endsWith('.d.ts');

/** `./y.js` imported from a source: `./y.ts` where no `y.js` exists beside it. */
export async function resolve(specifier, context, nextResolve) {
  if (context.parentURL && isSource(context.parentURL) && /^\.{1,2}\/.*\.js$/.test(specifier)) {
    const built = new URL(specifier, context.parentURL);
    const source = new URL(built.href.replace(/\.js$/, '.ts'));
    if (!existsSync(built) && existsSync(source)) return { url: source.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

/** A source compiled to an ES module: types dropped, nothing else changed. */
export async function load(url, context, nextLoad) {
  if (!isSource(url)) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const { code } = await transform(await readFile(file, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcefile: file,
    sourcemap: 'inline',
    // tsconfig.json's target: class fields are defined as TypeScript defines them there.
    tsconfigRaw: { compilerOptions: { target: 'ES2022', useDefineForClassFields: true } },
  });
  return { format: 'module', source: code, shortCircuit: true };
}
