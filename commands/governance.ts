import type { Command } from 'commander';
import type { DeletionResultResponse, JobAccepted, ServiceClient } from '../src/client/index.js';
import { action, ioOf } from './shared/context.js';
import { addYesOption, canPrompt, confirmDestructive } from './shared/confirm.js';
import { ExitCode } from './shared/exit-codes.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';
import { printAccepted } from './shared/async-jobs.js';
import { addRetentionCommands } from './retention.js';
import { forTerminal } from './shared/terminal-text.js';

interface DeleteOptions extends ClientOptionValues {
  yes?: boolean;
  async?: boolean;
  dryRun?: boolean;
}

function counts(r: DeletionResultResponse): string {
  return `${r.patterns_deleted} patterns, ${r.jobs_deleted} jobs, ${r.projects_deleted} projects; ${r.keys_revoked} keys revoked`;
}

function describeResult(r: DeletionResultResponse): string {
  const what = r.project_id === '*' ? `tenant ${r.tenant_id}` : `project ${r.tenant_id}/${r.project_id}`;
  return r.dry_run ? `dry run for ${what}: would delete ${counts(r)} (nothing deleted)` : `deleted ${what}: ${counts(r)}`;
}

function deletion(group: Command, name: string, description: string): Command {
  const cmd = group
    .command(name)
    .description(description)
    .option('--dry-run', 'only count what would be deleted and revoked (no confirmation needed)')
    .option('--async', 'queue the deletion as a job (Prefer: respond-async) and print its id');
  addYesOption(cmd);
  addClientOptions(cmd);
  return cmd;
}

type Delete = (client: ServiceClient, options: { dryRun?: boolean; async?: boolean }) => Promise<DeletionResultResponse | JobAccepted>;

/**
 * One deletion command's run: a dry run only counts; a real one asks first on a terminal,
 * showing what a dry run counted (so the person confirms numbers, not a guess), and needs
 * --yes elsewhere. Warnings (your own key is revoked) go to stderr.
 */
async function runDeletion(opts: DeleteOptions, command: Command, what: { action: string; question: string }, remove: Delete): Promise<number | void> {
  const io = ioOf(command);
  const dryRun = opts.dryRun === true;
  return withClient(opts, command, async (client, out) => {
    if (!dryRun && !opts.yes && canPrompt(io)) {
      const preview = await out.withSpinner('counting…', () => remove(client, { dryRun: true })) as DeletionResultResponse;
      const warnings = (preview.warnings ?? []).map((w) => ` Warning: ${w}.`).join('');
      const question = `${what.question} It deletes ${counts(preview)}.${warnings} This cannot be undone.`;
      if (!(await confirmDestructive(io, opts, { action: what.action, question }))) return ExitCode.FAILURE;
    } else if (!dryRun && !(await confirmDestructive(io, opts, { action: what.action, question: `${what.question} This cannot be undone.` }))) {
      return ExitCode.FAILURE;
    }
    if (opts.async) return printAccepted(out, await remove(client, { async: true, dryRun }) as JobAccepted);
    const res = await out.withSpinner(dryRun ? 'counting…' : 'deleting…', () => remove(client, { dryRun })) as DeletionResultResponse;
    for (const warning of res.warnings ?? []) io.stderr.write(`${forTerminal(`warning: ${warning}`)}\n`);
    out.result(res, () => describeResult(res));
  });
}

export function register(program: Command): void {
  const group = program.command('governance').description('data retention, and irreversible deletions of a project, a tenant or your own scope');

  addRetentionCommands(group.command('retention').description('data retention of the project: show, set, apply'));

  deletion(group, 'delete-project', 'delete a project of your tenant and everything in it; its keys are revoked')
    .argument('<project_id>', 'the project to delete')
    .action(action(async (projectId: string, opts: DeleteOptions, command: Command) => runDeletion(opts, command, {
      action: `delete project ${projectId}`,
      question: `Delete project ${projectId} and all its data?`,
    }, (client, o) => (o.async ? client.governance.deleteProject(projectId, { ...o, async: true }) : client.governance.deleteProject(projectId, { dryRun: o.dryRun })))));

  deletion(group, 'delete-tenant', 'delete your whole tenant: every project, all data; all keys revoked (owner only)')
    .argument('<tenant_id>', 'your tenant id')
    .action(action(async (tenantId: string, opts: DeleteOptions, command: Command) => runDeletion(opts, command, {
      action: `delete tenant ${tenantId}`,
      question: `Delete tenant ${tenantId}, every project and all data?`,
    }, (client, o) => (o.async ? client.governance.deleteTenant(tenantId, { ...o, async: true }) : client.governance.deleteTenant(tenantId, { dryRun: o.dryRun })))));

  deletion(group, 'delete-scope', 'delete everything in the scope of your key (or --project)')
    .action(action(async (opts: DeleteOptions, command: Command) => runDeletion(opts, command, {
      action: 'delete this scope',
      question: 'Delete all data of this scope?',
    }, (client, o) => (o.async ? client.governance.deleteScope({ ...o, async: true }) : client.governance.deleteScope({ dryRun: o.dryRun })))));
}
