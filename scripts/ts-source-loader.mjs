// Lets a Node process or worker thread run the project's TypeScript sources as they are
// (`node --import ./scripts/ts-source-loader.mjs x.ts`): a `.ts` module is compiled by esbuild
// as it loads, and `./y.js` imported from one finds `./y.ts` (the sources import each other by
// their built names). vitest runs the sources its own way, but a worker thread they start is
// plain Node: the JSON store's scan thread (src/adapters/storage/json/engine/scan-thread.ts)
// starts its worker with this loader when it runs as source. A build (dist/) never uses it.
import { register } from 'node:module';

register('./ts-source-hooks.mjs', import.meta.url);
