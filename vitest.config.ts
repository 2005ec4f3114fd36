import { defineConfig } from 'vitest/config';

/**
 * One vitest project per kind of test, each runnable alone (`npx vitest run --project cli`;
 * docs/development.md lists them); `npm test` runs them all but `bench`. Every project inherits the
 * options below (`extends: true`).
 */
const PROJECTS: Record<string, string[]> = {
  unit: ['test/unit', 'test/embeddings'],
  contract: ['test/contract'],
  api: ['test/api', 'test/llm', 'test/telemetry'],
  postgres: ['test/postgres'],
  cli: ['test/cli'],
  console: ['test/console'],
  package: ['test/package', 'test/container', 'test/docs'],
  // The benchmark's own end-to-end run: `npm run bench:selftest`, not part of `npm test`.
  bench: ['test/bench'],
};

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Drops PostgreSQL test databases an interrupted earlier run left behind.
    globalSetup: ['test/support/pg-leftovers.ts'],
    // Test files each own their temp dirs / ports / schemas, so files run in parallel.
    reporters: ['default', ['json', { outputFile: '.test-results/results.json' }]],
    projects: Object.entries(PROJECTS).map(([name, dirs]) => ({
      extends: true,
      test: { name, include: dirs.map((dir) => `${dir}/**/*.test.ts`) },
    })),
  },
});
