import type { Command } from 'commander';
import { formatNumber } from '../src/core/output-numbers.js';
import { action } from './shared/context.js';
import { addExamples } from './shared/help.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';
import { snippet, table } from './shared/output.js';

/** `service skills register KEY TAG… | search TAG…`: skill tags on stored patterns. */
export function register(program: Command): void {
  const skills = program.command('skills').description('tag stored patterns with skills and find patterns by tag');

  const reg = skills
    .command('register')
    .description("set a pattern's skill tags (replaces its tags; trimmed, lower-cased, de-duplicated)")
    .argument('<key>', 'the pattern key, e.g. patterns/0190b5c2a1f3')
    .argument('<tags...>', 'one or more skill tags');
  addClientOptions(reg);
  addExamples(reg, ['service skills register patterns/0190b5c2a1f3 csv parsing python']);
  reg.action(action(async (key: string, tags: string[], opts: ClientOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const res = await client.skillsRegister({ pattern_key: key, skills: tags });
      out.result(res, () => `${res.pattern_key}: ${res.skills.join(', ') || '(no tags)'}`);
    })));

  const search = skills
    .command('search')
    .description('patterns tagged with any (or, with --all, every) of the tags')
    .argument('<tags...>', 'one or more skill tags')
    .option('--all', 'only patterns that have every tag');
  addClientOptions(search);
  addExamples(search, ['service skills search csv', 'service skills search csv python --all']);
  search.action(action(async (tags: string[], opts: ClientOptionValues & { all?: boolean }, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const res = await client.skillsSearch({ skills: tags, match_all: opts.all === true });
      out.result(res, () => res.count === 0
        ? 'no patterns with those tags'
        : table(['key', 'skills', 'success', 'task'], res.matches.map((m) => [
          m.pattern_key, m.skills.join(', '), formatNumber(m.pattern.success_score), snippet(m.pattern.task),
        ]), out.color));
    })));
}
