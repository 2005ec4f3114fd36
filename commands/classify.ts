import { InvalidArgumentError, type Command } from 'commander';
import { CLASSIFICATIONS, type Classification } from '../src/core/types.js';
import { action } from './shared/context.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';

function classificationArgument(value: string): Classification {
  if ((CLASSIFICATIONS as readonly string[]).includes(value)) return value as Classification;
  throw new InvalidArgumentError(`expected one of ${CLASSIFICATIONS.join(', ')}`);
}

export function register(program: Command): void {
  const cmd = program
    .command('classify')
    .description('set the classification of a pattern (recall and export filters see it at once)')
    .argument('<key>', 'pattern key, e.g. patterns/0abc123')
    .argument('<classification>', CLASSIFICATIONS.join(' | '), classificationArgument);
  addClientOptions(cmd);
  cmd.action(action(async (key: string, classification: Classification, opts: ClientOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const res = await client.governance.classify(key, classification);
      out.result(res, () => `${res.key} is now ${res.classification}`);
    })));
}
