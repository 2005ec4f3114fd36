import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError, ConflictError, MaintenanceError, NotFoundError, ServiceClient, ServiceUnavailableError, ValidationFailedError,
} from '../../src/client/index.js';
import { exitCodeFor, ExitCode } from '../../commands/shared/exit-codes.js';
import { startServer, type TestServer } from './helpers.js';

/**
 * The typed client raises one class per stable error code, and the CLI's exit code follows the
 * code: against a real listening server, not by status alone.
 */
let t: TestServer;
let maintenance: TestServer;
let client: ServiceClient;
let down: ServiceClient;
beforeAll(async () => {
  t = await startServer();
  maintenance = await startServer({ SERVICE_MAINTENANCE: 'true' });
  await t.server.listen({ host: '127.0.0.1', port: 0 });
  await maintenance.server.listen({ host: '127.0.0.1', port: 0 });
  client = new ServiceClient({ url: `http://127.0.0.1:${(t.server.server.address() as AddressInfo).port}` });
  down = new ServiceClient({ url: `http://127.0.0.1:${(maintenance.server.server.address() as AddressInfo).port}` });
});
afterAll(async () => {
  await client?.close();
  await down?.close();
  await t?.close();
  await maintenance?.close();
});

async function failure(call: Promise<unknown>): Promise<ApiError> {
  const err = await call.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('error classes from error codes', () => {
  it('validation_failed, not_found and maintenance arrive as their own classes with their exit codes', async () => {
    const invalid = await failure(client.learn({ task: 'x', code: 'y', eval_score: 12 }));
    expect(invalid).toBeInstanceOf(ValidationFailedError);
    expect(invalid.code).toBe('validation_failed');
    expect(exitCodeFor(invalid)).toBe(ExitCode.USAGE);

    const missing = await failure(client.deletePattern('patterns/nothinghere0'));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(exitCodeFor(missing)).toBe(ExitCode.NOT_FOUND);

    const closed = await failure(down.recall({ task: 'anything' }));
    expect(closed).toBeInstanceOf(MaintenanceError);
    expect(closed).toBeInstanceOf(ServiceUnavailableError);
    expect(closed.code).toBe('maintenance');
    expect(exitCodeFor(closed)).toBe(ExitCode.FAILURE);
    expect(closed).not.toBeInstanceOf(ConflictError);
  });

  it('the code decides the exit code even when a proxy changes the status; no code falls back to the status', () => {
    const relabelled = new ApiError(400, 'refused', { code: 'not_found', detail: 'x' }, null);
    expect(exitCodeFor(relabelled)).toBe(ExitCode.NOT_FOUND);
    const bare = new ApiError(429, 'slow down', { detail: 'x' }, null);
    expect(exitCodeFor(bare)).toBe(ExitCode.LIMITED);
  });
});
