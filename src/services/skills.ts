import { NotFoundError } from '../core/errors.js';
import type {
  SkillsRegisterInput, SkillsRegisterResponse, SkillsSearchInput, SkillsSearchResponse,
} from '../contracts/memory.js';
import { patternKey, type Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';
import { parsePatternKey } from '../core/types.js';

/** Tags are trimmed, lower-cased and de-duplicated (first occurrence order kept). */
export function normaliseSkills(skills: string[]): string[] {
  return [...new Set(skills.map((s) => s.trim().toLowerCase()).filter((s) => s.length > 0))];
}

/** Replaces the tags of an existing pattern. */
export async function registerSkills(
  deps: ServiceDeps,
  scope: Scope,
  input: SkillsRegisterInput,
): Promise<SkillsRegisterResponse> {
  const id = parsePatternKey(input.pattern_key, 'pattern_key');
  if (!(await deps.storage.patterns.get(scope, id))) throw new NotFoundError(`pattern ${input.pattern_key} not found`);
  const skills = normaliseSkills(input.skills);
  await deps.storage.skills.set(scope, id, skills);
  return { pattern_key: input.pattern_key, skills, registered: skills.length };
}

/** Patterns tagged with any (or, with match_all, every) of the skills, best success_score first. */
export async function searchSkills(
  deps: ServiceDeps,
  scope: Scope,
  input: SkillsSearchInput,
): Promise<SkillsSearchResponse> {
  const skills = normaliseSkills(input.skills);
  if (skills.length === 0) return { matches: [], count: 0 };
  const tagged = await deps.storage.skills.search(scope, skills, input.match_all);
  const patterns = await deps.storage.patterns.getMany(scope, [...tagged.keys()]);
  patterns.sort((a, b) => b.success_score - a.success_score || a.id.localeCompare(b.id));
  const matches = patterns.map((p) => ({
    pattern_key: patternKey(p.id),
    skills: tagged.get(p.id) ?? [],
    pattern: { task: p.task, code: p.code, success_score: p.success_score, reuse_count: p.reuse_count },
  }));
  return { matches, count: matches.length };
}
