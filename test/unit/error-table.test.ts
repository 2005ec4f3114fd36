import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT_CODE_HELP, exitCodeFor, exitCodeForStatus } from '../../commands/shared/exit-codes.js';
import { buildOpenApiDocument } from '../../server/openapi/document.js';
import { mapError } from '../../server/plugins/errors.js';
import { apiErrorFor } from '../../src/client/api-errors.js';
import { ApiError } from '../../src/client/errors.js';
import { ERROR_CODES, ERROR_TABLE, codesForStatus, wireCodeForStatus, type WireErrorCode } from '../../src/core/error-table.js';
import { DomainError, MaintenanceError, StorageUnavailableError, UnavailableError, ValidationError } from '../../src/core/errors.js';
import { ErrorCodeSchema } from '../../src/contracts/errors.js';
import { LearnRequest, LearnResponse } from '../../src/contracts/memory.js';
import { toolFailureOf } from '../../src/mcp/errors.js';

/**
 * The error table (src/core/error-table.ts) walked row by row against every consumer: what the
 * server answers, which client class is thrown, the CLI's exit code, the MCP tool error, the
 * OpenAPI error responses and docs/http-api.md / docs/cli.md. A consumer that maps a code on its own fails here.
 */
const rows = ERROR_CODES.map((code) => [code, ERROR_TABLE[code]] as const);
const answerOf = (code: WireErrorCode) => apiErrorFor(ERROR_TABLE[code].status, 'why', { code, detail: 'why' }, 'req-1', null);

describe('the error table', () => {
  it('has one generic code for each status that several codes share', () => {
    for (const status of new Set(rows.map(([, row]) => row.status))) {
      const codes = codesForStatus(status);
      const generic = codes.filter((code) => 'generic' in ERROR_TABLE[code]);
      expect(codes.length === 1 ? codes : generic, `status ${status}`).toHaveLength(1);
      expect(ERROR_TABLE[wireCodeForStatus(status)].status).toBe(status);
    }
  });

  it('is the contracts\' code enum', () => {
    expect(ErrorCodeSchema.options).toEqual(ERROR_CODES);
  });

  it.each(rows)('%s: the server answers its status with its code', (code, row) => {
    const mapped = mapError(new DomainError(code, 'why'), 1000);
    expect(mapped.status).toBe(row.status);
    expect(mapped.body.code).toBe(code);
  });

  it.each(rows)('%s: the client throws its own class, with its retryability', (code, row) => {
    const error = answerOf(code);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.constructor).not.toBe(ApiError);
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(row.retryable);
  });

  it.each(rows)('%s: the CLI exits with its exit code, for an answer and for an in-process domain error', (code, row) => {
    expect(exitCodeFor(answerOf(code))).toBe(row.exit);
    expect(exitCodeFor(new DomainError(code, 'why'))).toBe(row.exit);
  });

  it.each(rows)('%s: MCP reports the REST code', (code, row) => {
    expect(toolFailureOf(answerOf(code))).toMatchObject({ code, status: row.status, retryable: row.retryable });
  });

  it('an answer without a code falls back to its status\'s generic row (CLI and MCP alike)', () => {
    for (const [code, row] of rows) {
      const bare = new ApiError(row.status, 'why', { detail: 'why' }, null);
      const generic = wireCodeForStatus(row.status);
      expect(exitCodeFor(bare), code).toBe(ERROR_TABLE[generic].exit);
      expect(toolFailureOf(bare)?.code, code).toBe(generic);
    }
    expect(exitCodeForStatus(418)).toBe(1);
  });

  it('the domain errors carry table codes (unavailability split by subsystem)', () => {
    expect(new ValidationError('x').code).toBe('validation_failed');
    expect(new MaintenanceError().code).toBe('maintenance');
    expect(new StorageUnavailableError('x').code).toBe('storage_unavailable');
    expect(new UnavailableError('x').code).toBe('service_unavailable');
  });

  it('every error status of the OpenAPI document lists the codes answered with it', () => {
    const contract = { method: 'POST', url: '/v1/learn', permission: 'learn', tag: 'memory', summary: 'learn', body: LearnRequest, response: LearnResponse } as const;
    const { document } = buildOpenApiDocument([{ method: 'POST', url: '/v1/learn', config: { permission: 'learn', contract } }], 'test');
    const responses = (document.paths as Record<string, { post: { responses: Record<string, { description: string }> } }>)['/v1/learn'].post.responses;
    const statuses = Object.keys(responses).map(Number).filter((s) => s >= 400);
    expect(statuses.length).toBeGreaterThan(5);
    for (const status of statuses) {
      for (const code of codesForStatus(status)) expect(responses[status].description, `${status}`).toContain(`\`${code}\``);
    }
  });

  it('the docs\' code table and both exit-code summaries agree with the table', () => {
    const readme = readFileSync(new URL('../../docs/http-api.md', import.meta.url), 'utf8');
    const cli = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    const listed = new Map<string, number>();
    for (const [, codes, status] of readme.matchAll(/^\| (`[a-z_]+`(?: \/ `[a-z_]+`)*) \| (\d{3}) \|/gm)) {
      for (const code of codes.match(/[a-z_]+/g) ?? []) listed.set(code, Number(status));
    }
    expect(Object.fromEntries(listed)).toEqual(Object.fromEntries(rows.map(([code, row]) => [code, row.status])));

    const exitSection = cli.slice(cli.indexOf('## Exit codes'));
    const summaries = [
      ...exitSection.matchAll(/^\| (\d+) \| (.*) \|$/gm),
      ...EXIT_CODE_HELP.split(/\n(?= {2}\d)/).map((block) => block.match(/^\s+(\d+)\s+([\s\S]*)$/)).filter((m) => m !== null),
    ];
    expect(summaries.length).toBeGreaterThanOrEqual(14);
    for (const [, exit, text] of summaries) {
      for (const [, status] of text.matchAll(/\b(4\d\d|5\d\d)\b/g)) expect(`${status} → ${exitCodeForStatus(Number(status))}`).toBe(`${status} → ${exit}`);
    }
  });
});
