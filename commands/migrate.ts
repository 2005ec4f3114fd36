import type { Command } from 'commander';
import { loadConfig } from '../src/config.js';
import { action, ioOf } from './shared/context.js';
import { createOutput, table, type Output } from './shared/output.js';

interface MigrateOptions {
  to?: string;
  json?: boolean;
}

type Direction = 'up' | 'down';

/**
 * `service migrate up [--to REV] | down [--to REV] | status` against SERVICE_DATABASE_URL.
 * Runs locally (no server needed); concurrent runs are safe (advisory lock).
 */
export function register(program: Command): void {
  const migrate = program
    .command('migrate')
    .description('apply or revert the PostgreSQL schema migrations (needs SERVICE_DATABASE_URL)');

  migrate
    .command('up')
    .description('apply every pending migration, or those up to --to')
    .option('--to <revision>', 'stop after this revision (e.g. 0001 or 0001_init)')
    .option('--json', 'print JSON (the default when stdout is not a terminal)')
    .action(action(async (opts: MigrateOptions, command: Command) => run(command, opts, 'up')));

  migrate
    .command('down')
    .description('revert the newest applied migration, or every one above --to (--to 0 reverts all)')
    .option('--to <revision>', 'keep this revision and revert everything after it')
    .option('--json', 'print JSON (the default when stdout is not a terminal)')
    .action(action(async (opts: MigrateOptions, command: Command) => run(command, opts, 'down')));

  migrate
    .command('status')
    .description('list the migrations and whether each is applied')
    .option('--json', 'print JSON (the default when stdout is not a terminal)')
    .action(action(async (opts: MigrateOptions, command: Command) => status(command, opts)));
}

// Loaded on use so client-only commands never pay for the PostgreSQL driver.
const migrations = async () => (await import('../src/app.js')).schemaMigrations();
type SchemaStatus = Awaited<ReturnType<Awaited<ReturnType<typeof migrations>>['migrationStatus']>>;

async function run(command: Command, opts: MigrateOptions, direction: Direction): Promise<void> {
  const out = createOutput(ioOf(command), { json: opts.json });
  const m = await migrations();
  const pool = await m.openMaintenancePool(loadConfig(), 'migrate');
  try {
    const onStep = (dir: Direction, label: string) => {
      if (!out.json) out.line(`${dir === 'up' ? 'applying' : 'reverting'} ${label}`);
    };
    const done = direction === 'up'
      ? await m.migrateUp(pool, { to: opts.to, onStep })
      : await m.migrateDown(pool, { to: opts.to, onStep });
    const after = await m.migrationStatus(pool);
    out.result(
      { direction, [direction === 'up' ? 'applied' : 'reverted']: done, current: after.current, pending: after.pending },
      () => summary(direction, done, after),
    );
  } finally {
    await pool.end();
  }
}

function summary(direction: Direction, done: string[], after: SchemaStatus): string {
  const at = `database is at ${after.current ?? 'no revision (empty schema)'}`;
  if (done.length === 0) return `nothing to ${direction === 'up' ? 'apply' : 'revert'}: ${at}`;
  const verb = direction === 'up' ? 'applied' : 'reverted';
  const pending = after.pending.length ? `; pending: ${after.pending.join(', ')}` : '';
  return `${verb} ${done.length} migration${done.length === 1 ? '' : 's'}: ${at}${pending}`;
}

async function status(command: Command, opts: MigrateOptions): Promise<void> {
  const out = createOutput(ioOf(command), { json: opts.json });
  const m = await migrations();
  const pool = await m.openMaintenancePool(loadConfig(), 'migrate status');
  try {
    const s = await m.migrationStatus(pool);
    out.result(s, () => renderStatus(out, s));
  } finally {
    await pool.end();
  }
}

function renderStatus(out: Output, s: SchemaStatus): string {
  const rows = s.migrations.map((r) => [
    r.label,
    r.applied_at ? out.color.green('applied') : out.color.yellow('pending'),
    r.applied_at ?? '',
  ]);
  const lines = [table(['revision', 'state', 'applied at'], rows, out.color)];
  for (const u of s.unknown) lines.push(out.color.red(`${u}: applied in the database but unknown to this build`));
  lines.push(s.pending.length
    ? `${s.pending.length} pending: run \`service migrate up\``
    : `up to date at ${s.current ?? 'no revision'}`);
  return lines.join('\n');
}
