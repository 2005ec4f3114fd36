import type { Resource, ResourceTemplate, TextResourceContents } from '@modelcontextprotocol/sdk/types.js';

interface RememberedPattern {
  key: string;
  task: string;
  code: string;
  success_score: number;
}

const URI_PREFIX = 'memory://';
/** Enough for a long agent session; the oldest are forgotten first. */
const MAX_REMEMBERED = 500;

/**
 * The patterns this session has seen (recall and find_by_skills results), served as
 * `memory://patterns/{id}` so a client can attach one to the model's context. The service has
 * no read-one-pattern endpoint, so only patterns already returned to this session are served:
 * nothing is fetched that the caller's key has not already been shown.
 */
export class PatternResources {
  static readonly template: ResourceTemplate = {
    uriTemplate: `${URI_PREFIX}patterns/{id}`,
    name: 'pattern',
    title: 'Stored pattern',
    description: 'A stored task and its code, as returned by recall or find_by_skills in this session.',
    mimeType: 'text/markdown',
  };

  private readonly patterns = new Map<string, RememberedPattern>();

  /** Picks the patterns out of a tool result (anything with `matches[].pattern_key/pattern`). */
  remember(result: Record<string, unknown>): void {
    const matches = result.matches;
    if (!Array.isArray(matches)) return;
    for (const m of matches as { pattern_key?: unknown; pattern?: { task?: unknown; code?: unknown; success_score?: unknown } }[]) {
      const p = m.pattern;
      if (typeof m.pattern_key !== 'string' || !p || typeof p.task !== 'string' || typeof p.code !== 'string') continue;
      // Re-inserting moves the key to the end: the Map's order is the recency order.
      this.patterns.delete(m.pattern_key);
      this.patterns.set(m.pattern_key, {
        key: m.pattern_key, task: p.task, code: p.code, success_score: typeof p.success_score === 'number' ? p.success_score : 0,
      });
      if (this.patterns.size > MAX_REMEMBERED) this.patterns.delete(this.patterns.keys().next().value as string);
    }
  }

  list(): Resource[] {
    return [...this.patterns.values()].reverse().map((p) => ({
      uri: URI_PREFIX + p.key,
      name: p.key,
      title: p.task.length > 80 ? `${p.task.slice(0, 79)}…` : p.task,
      mimeType: 'text/markdown',
    }));
  }

  read(uri: string): TextResourceContents | null {
    if (!uri.startsWith(URI_PREFIX)) return null;
    const p = this.patterns.get(uri.slice(URI_PREFIX.length));
    if (!p) return null;
    const text = `# ${p.key}\n\nsuccess score: ${p.success_score.toFixed(1)}/10\n\n## Task\n\n${p.task}\n\n## Code\n\n\`\`\`\n${p.code}\n\`\`\`\n`;
    return { uri, mimeType: 'text/markdown', text };
  }
}
