import type { Command } from 'commander';
import { addExamples } from './shared/help.js';

/**
 * Examples ending the --help of the commands whose files do not add their own (new command
 * files call addExamples() themselves). Keyed by the command path.
 */
const EXAMPLES: Record<string, string[]> = {
  serve: ['service serve', 'SERVICE_STORAGE=postgres SERVICE_DATABASE_URL=postgres://… service serve --port 8080'],
  reindex: ['service reindex   # with the server stopped, after changing the embedding model'],
  learn: ['service learn --task "parse a CSV file" --code @parse.py --eval-score 8.5', 'cat parse.py | service learn --task "parse a CSV file" --code - --eval-score 8'],
  recall: ['service recall "parse a CSV file"', 'echo "resize images" | service recall - --limit 3 --json'],
  export: ['service export --output backup.json'],
  import: ['service import backup.json', 'service import backup.json --overwrite --wait'],
  health: ['service health', 'service health --deep'],
  version: ['service version'],
  evaluate: [
    'service evaluate --task @task.md --code @solution.py --output @out.txt --min-score 7',
    'service evaluate --batch cases.jsonl --concurrency 4 --junit reports/eval.xml',
  ],
  compose: ['service compose "ingest CSV uploads, validate them and load them into the warehouse"'],
  evolve: ['service evolve --role reviewer --prompt @reviewer-prompt.txt'],
  'feedback list': ['service feedback list --task-type csv'],
  'feedback decay': ['service feedback decay'],
  'feedback analyze': ['service feedback analyze --min-count 2'],
  'migrate-data': ['service migrate-data --from json --to postgres'],
  bootstrap: ['service bootstrap   # asks for the token on a terminal', 'service bootstrap --token "$SERVICE_BOOTSTRAP_TOKEN" --json'],
  'keys create': ['service keys create --name ci --role editor', 'service keys create --name nightly --expires-at 2030-01-01T00:00:00Z --json'],
  'keys list': ['service keys list'],
  'keys revoke': ['service keys revoke 7f0c…   # asks first', 'service keys revoke 7f0c… --yes'],
  'keys rotate': ['service keys rotate 7f0c…'],
  'analytics rollup': ['service analytics rollup daily'],
  'analytics get': ['service analytics get weekly'],
  'analytics events': ['service analytics events --limit 100'],
  'governance retention get': ['service governance retention get'],
  'governance retention set': ['service governance retention set 90', 'service governance retention set inherit'],
  'jobs list': ['service jobs list --status pending'],
  'jobs get': ['service jobs get 0190…'],
  'jobs cancel': ['service jobs cancel 0190…'],
  'jobs wait': ['service jobs wait 0190…'],
};

function pathOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Adds the examples above to every registered command that has an entry. */
export function addDefaultExamples(program: Command): void {
  const visit = (cmd: Command) => {
    const examples = EXAMPLES[pathOf(cmd)];
    if (examples) addExamples(cmd, examples);
    cmd.commands.forEach(visit);
  };
  program.commands.forEach(visit);
}
