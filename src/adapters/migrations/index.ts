export { defaultMigrationsDir, loadMigrations, parseRevision, revisionLabel, type Migration } from './files.js';
export {
  assertSchemaCurrent, migrateDown, migrateUp, migrationStatus,
  type MigrationOptions, type RevisionStatus, type SchemaStatus,
} from './runner.js';
export { planMigrateUp, type PlannedStep } from './plan.js';
