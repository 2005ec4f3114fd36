/**
 * The shared Storage contract (test/contract/storage.contract.ts, unchanged) on PostgreSQL +
 * pgvector. This file owns one database; the tests share one migrated schema in it, emptied
 * before each test.
 */
import { afterAll, describe } from 'vitest';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import { createTestDatabase, pgConfig, requirePostgres, reusableSchema, type TestDatabase } from '../support/pg.js';
import { runStorageContract } from './storage.contract.js';

const hasPg = await requirePostgres('storage contract on PostgreSQL');

let database: Promise<TestDatabase> | null = null;
const db = () => (database ??= createTestDatabase('contract'));
const schemas = reusableSchema(db, 'contract');

afterAll(async () => {
  if (database) await (await database).drop();
});

describe.skipIf(!hasPg)('PostgreSQL storage', () => {
  runStorageContract('postgres', async () => {
    const schema = await schemas.next();
    const storage = await createPostgresStorage(pgConfig(schema.url));
    return { storage, cleanup: () => storage.close() };
  });
});
