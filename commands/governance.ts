import type { Command } from 'commander';
import type { DeletionResultResponse } from '../src/client/index.js';
import { action, ioOf } from './shared/context.js';
import { addYesOption, confirmDestructive } from './shared/confirm.js';
import { ExitCode } from './shared/exit-codes.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';
import { printAccepted } from './shared/async-jobs.js';
import { addRetentionCommands } from './retention.js';

interface DeleteOptions extends ClientOptionValues {
  yes?: boolean;
  async?: boolean;
}

function describeResult(r: DeletionResultResponse): string {
  const what = r.project_id === '*' ? `tenant ${r.tenant_id}` : `project ${r.tenant_id}/${r.project_id}`;
  const counts = `${r.patterns_deleted} patterns, ${r.jobs_deleted} jobs, ${r.projects_deleted} projects; ${r.keys_revoked} keys revoked`;
  return r.dry_run ? `dry run for ${what}: would delete ${counts} (nothing deleted)` : `deleted ${what}: ${counts}`;
}

function deletion(group: Command, name: string, description: string): Command {
  const cmd = group
    .command(name)
    .description(description)
    .option('--async', 'queue the deletion as a job (Prefer: respond-async) and print its id');
  addYesOption(cmd);
  addClientOptions(cmd);
  return cmd;
}

export function register(program: Command): void {
  const group = program.command('governance').description('data retention, and irreversible deletions of a project, a tenant or your own scope');

  addRetentionCommands(group.command('retention').description('data retention of the project: show, set, apply'));

  deletion(group, 'delete-project', 'delete a project of your tenant and everything in it; its keys are revoked')
    .argument('<project_id>', 'the project to delete')
    .action(action(async (projectId: string, opts: DeleteOptions, command: Command) => {
      const question = `Delete project ${projectId} and all its data? This cannot be undone.`;
      if (!(await confirmDestructive(ioOf(command), opts, { action: `delete project ${projectId}`, question }))) return ExitCode.FAILURE;
      return withClient(opts, command, async (client, out) => {
        const gov = client.governance;
        if (opts.async) return printAccepted(out, await gov.deleteProject(projectId, { async: true }));
        const res = await out.withSpinner('deleting…', () => gov.deleteProject(projectId));
        out.result(res, () => describeResult(res));
      });
    }));

  deletion(group, 'delete-tenant', 'delete your whole tenant: every project, all data; all keys revoked (owner only)')
    .argument('<tenant_id>', 'your tenant id')
    .action(action(async (tenantId: string, opts: DeleteOptions, command: Command) => {
      const question = `Delete tenant ${tenantId}, every project and all data? This cannot be undone.`;
      if (!(await confirmDestructive(ioOf(command), opts, { action: `delete tenant ${tenantId}`, question }))) return ExitCode.FAILURE;
      return withClient(opts, command, async (client, out) => {
        const gov = client.governance;
        if (opts.async) return printAccepted(out, await gov.deleteTenant(tenantId, { async: true }));
        const res = await out.withSpinner('deleting…', () => gov.deleteTenant(tenantId));
        out.result(res, () => describeResult(res));
      });
    }));

  deletion(group, 'delete-scope', 'delete everything in the scope of your key (or --project)')
    .option('--dry-run', 'only count what would be deleted')
    .action(action(async (opts: DeleteOptions & { dryRun?: boolean }, command: Command) => {
      // A dry run deletes nothing: no confirmation needed.
      const question = 'Delete all data of this scope? This cannot be undone.';
      if (!opts.dryRun && !(await confirmDestructive(ioOf(command), opts, { action: 'delete this scope', question }))) return ExitCode.FAILURE;
      return withClient(opts, command, async (client, out) => {
        const gov = client.governance;
        const dryRun = opts.dryRun === true;
        if (opts.async) return printAccepted(out, await gov.deleteScope({ async: true, dryRun }));
        const res = await out.withSpinner(dryRun ? 'counting…' : 'deleting…', () => gov.deleteScope({ dryRun }));
        out.result(res, () => describeResult(res));
      });
    }));
}
