import type { Command } from 'commander';
import { loadConfig } from '../src/config/index.js';
import { addYesOption, confirmDestructive, type YesOptionValues } from './shared/confirm.js';
import { action, ioOf } from './shared/context.js';
import { ExitCode } from './shared/exit-codes.js';
import { addExamples } from './shared/help.js';
import { createOutput, table, type Output } from './shared/output.js';

interface MigrateOptions extends YesOptionValues {
  to?: string;
  json?: boolean;
  dryRun?: boolean;
  check?: boolean;
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

  const up = migrate
    .command('up')
    .description('apply every pending migration, or those up to --to')
    .option('--to <revision>', 'stop after this revision (e.g. 0001 or 0001_init)')
    .option('--dry-run', 'print the SQL that would run, apply nothing')
    .option('--json', 'print JSON (the default when stdout is not a terminal)')
    .action(action(async (opts: MigrateOptions, command: Command) => (opts.dryRun ? planUp(command, opts) : run(command, opts, 'up'))));
  addExamples(up, ['SERVICE_DATABASE_URL=postgres://… service migrate up', 'service migrate up --dry-run > pending.sql']);

  const down = migrate
    .command('down')
    .description('revert the newest applied migration, or every one above --to (--to 0 reverts all; drops data)')
    .option('--to <revision>', 'keep this revision and revert everything after it')
    .option('--json', 'print JSON (the default when stdout is not a terminal)');
  addYesOption(down);
  addExamples(down, ['service migrate down            # asks first', 'service migrate down --to 0001 --yes']);
  down.action(action(async (opts: MigrateOptions, command: Command) => {
    const target = opts.to === undefined ? 'the newest applied migration' : `every migration after ${opts.to}`;
    if (!(await confirmDestructive(ioOf(command), opts, {
      action: `revert ${target}`,
      question: `Revert ${target}? Tables and data it created are dropped.`,
    }))) return ExitCode.FAILURE;
    return run(command, opts, 'down');
  }));

  const status = migrate
    .command('status')
    .description('list the migrations and whether each is applied')
    .option('--check', 'exit 1 when migrations are pending (or unknown to this build), for deploy pipelines')
    .option('--json', 'print JSON (the default when stdout is not a terminal)')
    .action(action(async (opts: MigrateOptions, command: Command) => showStatus(command, opts)));
  addExamples(status, ['service migrate status', 'service migrate status --check || service migrate up']);
}

// Loaded on use so client-only commands never pay for the PostgreSQL driver.
const migrations = async () => (await import('../src/app.js')).schemaMigrations();
type SchemaStatus = Awaited<ReturnType<Awaited<ReturnType<typeof migrations>>['migrationStatus']>>;

async function planUp(command: Command, opts: MigrateOptions): Promise<void> {
  const out = createOutput(ioOf(command), { json: opts.json });
  const m = await migrations();
  const pool = await m.openMaintenancePool(loadConfig(), 'migrate up --dry-run');
  try {
    const steps = await m.planMigrateUp(pool, { to: opts.to });
    out.result({ dry_run: true, pending: steps }, () => steps.length === 0
      ? '-- nothing to apply: the database is up to date'
      : steps.map((s) => `-- ${s.label} (up)\n${s.sql.trimEnd()}\n`).join('\n'));
  } finally {
    await pool.end();
  }
}

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

async function showStatus(command: Command, opts: MigrateOptions): Promise<number> {
  const out = createOutput(ioOf(command), { json: opts.json });
  const m = await migrations();
  const pool = await m.openMaintenancePool(loadConfig(), 'migrate status');
  try {
    const s = await m.migrationStatus(pool);
    out.result(s, () => renderStatus(out, s));
    return opts.check && (s.pending.length > 0 || s.unknown.length > 0) ? ExitCode.FAILURE : ExitCode.OK;
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
    ? out.asInvoked(`${s.pending.length} pending: run \`service migrate up\``)
    : `up to date at ${s.current ?? 'no revision'}`);
  return lines.join('\n');
}
