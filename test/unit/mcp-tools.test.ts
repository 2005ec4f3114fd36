import { describe, expect, it } from 'vitest';
import { ApiError, TransportError } from '../../src/client/errors.js';
import { renderFailure, toolFailureOf } from '../../src/mcp/errors.js';
import { renderRecall } from '../../src/mcp/render.js';
import { TOOLS, jsonSchemaOf } from '../../src/mcp/tools.js';

describe('MCP tool definitions', () => {
  it.each(TOOLS.map((t) => [t.name, t] as const))('%s: schemas derive from its contracts and every described field exists', (_name, tool) => {
    const input = jsonSchemaOf(tool.input, 'input', tool.fields);
    expect(input.type).toBe('object');
    expect(input.$schema).toBeUndefined();
    for (const field of Object.keys(tool.fields)) expect((input.properties ?? {})[field]).toMatchObject({ description: tool.fields[field] });
    expect(jsonSchemaOf(tool.output, 'output').type).toBe('object');
    expect(tool.description.length).toBeGreaterThan(60);
  });
});

describe('tool failures', () => {
  it('keeps the code a body names (quota) and the Retry-After of a rate limit', () => {
    const quota = new ApiError(429, 'patterns quota exceeded', { error: 'quota_exceeded', detail: 'patterns quota exceeded' }, 'req-1', null);
    expect(toolFailureOf(quota)).toEqual({ code: 'quota_exceeded', retryable: false, status: 429, detail: 'patterns quota exceeded', request_id: 'req-1' });
    const limited = toolFailureOf(new ApiError(429, 'rate limit exceeded', { detail: 'rate limit exceeded' }, null, 60))!;
    expect(limited).toMatchObject({ code: 'rate_limited', retryable: true, retry_after_seconds: 60 });
    expect(renderFailure(limited)).toBe('error (rate_limited, HTTP 429): rate limit exceeded\nretry after 60 s');
  });

  it('maps statuses through the error table and lists field errors', () => {
    const invalid = new ApiError(422, 'invalid body: task: must not be blank', { detail: 'x', errors: [{ path: 'task', message: 'must not be blank' }] }, null);
    expect(renderFailure(toolFailureOf(invalid)!)).toBe('error (validation_failed, HTTP 422): invalid body: task: must not be blank\n- task: must not be blank');
    expect(toolFailureOf(new ApiError(501, 'no LLM', { detail: 'no LLM' }, null))?.code).toBe('llm_not_configured');
    expect(toolFailureOf(new TransportError('http://x', 'cannot reach', 'ECONNREFUSED'))).toEqual({ code: 'unreachable', retryable: true, status: null, detail: 'cannot reach' });
    expect(toolFailureOf(new Error('bug'))).toBeNull();
  });
});

describe('recall rendering', () => {
  const match = (i: number, code: string) => ({
    similarity: 0.9 - i / 10, reuse_tier: 'adapt' as const, pattern_key: `patterns/k${i}`, score: 1,
    pattern: { task: `task ${i}`, code, success_score: 8, reuse_count: 0 },
  });

  it('shows the top three with tier, similarity and code, cutting long code', () => {
    const text = renderRecall({ recall_id: 'r1', matches: [0, 1, 2, 3].map((i) => match(i, i === 0 ? 'x'.repeat(2500) : `code ${i}`)), has_more: true, next_offset: 4 });
    expect(text).toContain('4 matches (top 3 shown):');
    expect(text).toContain('1. adapt · similarity 0.900 · success 8.0 · patterns/k0');
    expect(text).toContain('… (500 more characters in the structured result)');
    expect(text).toContain('code 2');
    expect(text).not.toContain('code 3');
    expect(text).toContain('recall_id: r1 (after reusing a match, report how it went with report_outcome)');
    expect(text.endsWith('more matches: offset 4')).toBe(true);
  });
});
