import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layersPlugin } from './eslint/layers.js';

export default tseslint.config(
  { ignores: ['dist/**', '.build-*/**', 'packages/*/dist/**', 'packages/*/.build-*/**', 'node_modules/**', 'service_data/**', 'coverage/**', 'test/fixtures/layers/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'exit', message: 'Set process.exitCode; only bin/ and commands/main.ts may exit.' }],
    },
  },
  // Import direction between layers (eslint/layers.js; proven by test/unit/layers-lint.test.ts).
  { files: ['**/*.ts'], plugins: { project: layersPlugin }, rules: { 'project/layers': 'error' } },
  {
    files: ['**/*.ts'],
    ignores: ['src/services/api-key-secrets.ts'],
    rules: {
      'no-restricted-imports': ['error', ...['node:crypto', 'crypto'].map((name) => ({
        name,
        importNames: ['timingSafeEqual'],
        message: 'Compare secrets with digestsEqual / secretMatches from src/services/api-key-secrets.ts (the one constant-time comparer).',
      }))],
    },
  },
  { files: ['bin/**', 'commands/main.ts', 'scripts/**', 'test/**'], rules: { 'no-restricted-properties': 'off' } },
  // The web console runs in the browser and reaches the server only through the REST API, with
  // the service's own client: it may import preact, its own files, the client's browser entry
  // (src/client/browser.ts, which checks answers with the contracts), the closed word lists
  // (src/core/vocabulary.ts) and types (only types) of the API's contracts.
  {
    files: ['console/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { regex: '^\\.\\./\\.\\./(?!src/contracts/|src/client/browser\\.js$|src/core/vocabulary\\.js$)', message: 'the console talks to the server over HTTP only, through src/client/browser.js: import nothing else from the server side' },
          { regex: '^\\.\\./\\.\\./src/contracts/', allowTypeImports: true, message: 'the console may import only types from src/contracts (use import type)' },
          { regex: '^(?!preact(/|$)|\\.)', message: 'the console bundles preact only: add a dependency deliberately (it counts against the 250 kB budget)' },
        ],
      }],
    },
  },
);
