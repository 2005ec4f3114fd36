import type { Command } from 'commander';
import { loadConfig } from '../src/config/index.js';
import { action, ioOf } from './shared/context.js';
import { createOutput } from './shared/output.js';

interface ReindexOptions {
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command('reindex')
    .description('re-embed every stored pattern with the configured embedding model (run with the server stopped)')
    .option('--json', 'print JSON (the default when stdout is not a terminal)')
    .action(action(async (opts: ReindexOptions, command: Command) => {
      const out = createOutput(ioOf(command), { json: opts.json });
      // The mismatch check is what reindex repairs, so it is skipped here. Opening the store
      // takes its lock: while a server holds the data path this fails with the storage's message.
      // Loaded lazily so client commands never load storage and the model runtime.
      const [{ createApp }, { reindex }] = await Promise.all([import('../src/app.js'), import('../src/services/reindex.js')]);
      const app = await createApp(loadConfig(), {}, { allowEmbeddingMismatch: true, runJobs: false });
      try {
        const result = await reindex(app.deps, (done, total) => out.progress(`reindexing ${done}/${total} patterns`));
        out.progressDone();
        const { model, dimension } = app.deps.embedder.info;
        out.result(
          { patterns: result.patterns, model, dimension },
          () => `reindexed ${result.patterns} patterns with ${model} (${dimension} dimensions)`,
        );
      } finally {
        out.progressDone();
        await app.close();
      }
    }));
}
