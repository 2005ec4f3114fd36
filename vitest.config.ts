import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Drops PostgreSQL test databases an interrupted earlier run left behind.
    globalSetup: ['test/support/pg-leftovers.ts'],
    // Test files each own their temp dirs / ports / schemas, so files run in parallel.
    reporters: ['default', ['json', { outputFile: '.test-results/results.json' }]],
  },
});
