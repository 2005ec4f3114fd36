import type { Command } from 'commander';
import { commandOf } from './shared/command-line.js';

/** What every command file exports: adds its command (and subcommands) to the program. */
export interface CommandModule {
  register(program: Command): void;
}

/**
 * Every top-level command and where it lives, in the order `service --help` lists them.
 * Modules are imported only when needed (see main.ts): `service recall` loads recall.ts and
 * what it imports, never the server, the model runtime, pg or zod. To add a command: create
 * commands/<name>.ts exporting register(program) and add ONE line here.
 */
export const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  serve: () => import('./serve.js'),
  reindex: () => import('./reindex.js'),
  learn: () => import('./learn.js'),
  recall: () => import('./recall.js'),
  outcome: () => import('./outcome.js'),
  export: () => import('./export.js'),
  import: () => import('./import.js'),
  health: () => import('./health.js'),
  version: () => import('./version.js'),
  evaluate: () => import('./evaluate.js'),
  compose: () => import('./compose.js'),
  evolve: () => import('./evolve.js'),
  feedback: () => import('./feedback.js'),
  migrate: () => import('./migrate.js'),
  'migrate-data': () => import('./migrate-data.js'),
  bootstrap: () => import('./bootstrap.js'),
  keys: () => import('./keys.js'),
  analytics: () => import('./analytics.js'),
  // Hidden: the old name of `governance retention`, kept for existing scripts.
  retention: () => import('./retention.js'),
  jobs: () => import('./jobs.js'),
  aging: () => import('./aging.js'),
  patterns: () => import('./patterns.js'),
  metrics: () => import('./metrics.js'),
  skills: () => import('./skills.js'),
  completion: () => import('./completion.js'),
  mcp: () => import('./mcp.js'),
  calibrate: () => import('./calibrate.js'),
  classify: () => import('./classify.js'),
  governance: () => import('./governance.js'),
  billing: () => import('./billing.js'),
};

/**
 * The commands a run needs: the one named first on the command line; none for a bare
 * `--version`; all of them otherwise (help, no command, a typo that deserves a suggestion).
 */
export function commandsFor(args: string[]): string[] {
  const first = commandOf(args);
  if (first !== undefined && Object.hasOwn(COMMANDS, first)) return [first];
  if (first === undefined && args.length > 0 && args.every((a) => a === '-V' || a === '--version')) return [];
  return Object.keys(COMMANDS);
}
