import { Option, type Command } from 'commander';
import type { KeyInfo } from '../src/client/index.js';
import { ROLES } from '../src/core/types.js';
import { action, ioOf } from './shared/context.js';
import { ExitCode } from './shared/exit-codes.js';
import { addClientOptions, integerIn, withClient, type ClientOptionValues } from './shared/options.js';
import { table } from './shared/output.js';
import { printIssuedSecret } from './key-secrets.js';
import { addYesOption, confirmDestructive, type YesOptionValues } from './shared/confirm.js';

interface CreateOptions extends ClientOptionValues {
  name: string;
  role?: string;
  maxPatterns?: number;
  expiresAt?: string;
  forProject?: string;
}

type RevokeOptions = ClientOptionValues & YesOptionValues;

/** `service keys create | list | revoke | rotate`: API keys of the caller's project (DB auth mode). */
export function register(program: Command): void {
  const keys = program.command('keys').description('manage API keys of your project, or as an owner of any project of your tenant (DB auth mode; admin role or higher)');

  const create = keys
    .command('create')
    .description('create an API key; its secret is printed once')
    .requiredOption('--name <name>', 'what the key is for (1 to 100 characters)')
    .addOption(new Option('--role <role>', 'role of the new key, at most your own (server default: editor)').choices(ROLES))
    .option('--max-patterns <n>', 'pattern quota of the key (default: the project\'s quota)', integerIn(0, 1_000_000_000))
    .option('--expires-at <iso>', 'expiry as an ISO 8601 time, e.g. 2030-01-01T00:00:00Z')
    .option('--for-project <id>', '(owner keys) create the key for another project of your tenant');
  addClientOptions(create);
  create.action(action(async (opts: CreateOptions, command: Command) => {
    return withClient(opts, command, async (client, out) => {
      const issued = await client.keys.create({
        name: opts.name,
        role: opts.role as (typeof ROLES)[number] | undefined,
        max_patterns: opts.maxPatterns,
        expires_at: opts.expiresAt,
        project_id: opts.forProject,
      });
      printIssuedSecret(ioOf(command), out, issued, `key "${issued.name}" created`);
    });
  }));

  const list = keys
    .command('list')
    .description('list the keys of your project (never their secrets)')
    .option('--for-project <id>', '(owner keys) the keys of another project of your tenant')
    .addOption(new Option('--all-projects', '(owner keys) the keys of every project of your tenant').conflicts('forProject'));
  addClientOptions(list);
  list.action(action(async (opts: ClientOptionValues & { forProject?: string; allProjects?: boolean }, command: Command) => {
    return withClient(opts, command, async (client, out) => {
      const res = await client.keys.list({ projectId: opts.forProject, allProjects: opts.allProjects });
      const acrossProjects = opts.allProjects === true;
      out.result(res, () => renderKeys(res.keys, out.color.dim, acrossProjects));
    });
  }));

  const revoke = keys
    .command('revoke')
    .description('revoke a key: every request with it is refused at once (owner keys: a key of any project of the tenant)')
    .argument('<key-id>', 'id of the key (see `service keys list`, `--all-projects` for an owner)');
  addYesOption(revoke);
  addClientOptions(revoke);
  revoke.action(action(async (keyId: string, opts: RevokeOptions, command: Command) => {
    if (!(await confirmDestructive(ioOf(command), opts, {
      action: `revoke ${keyId}`,
      question: `Revoke API key ${keyId}? Requests using it will be refused at once.`,
    }))) return ExitCode.FAILURE;
    return withClient(opts, command, async (client, out) => {
      const revoked = await client.keys.revoke(keyId);
      out.result(revoked, () => `revoked ${revoked.key_id} ("${revoked.name}") at ${revoked.revoked_at}`);
    });
  }));

  const rotate = keys
    .command('rotate')
    .description('replace a key\'s secret: a new key (same name, role, quota) is printed once; the old secret stops working (owner keys: any project of the tenant)')
    .argument('<key-id>', 'id of the key (see `service keys list`, `--all-projects` for an owner)');
  addClientOptions(rotate);
  rotate.action(action(async (keyId: string, opts: ClientOptionValues, command: Command) => {
    return withClient(opts, command, async (client, out) => {
      const issued = await client.keys.rotate(keyId);
      printIssuedSecret(ioOf(command), out, issued, `key "${issued.name}" rotated; new key id`, [
        `the old secret of ${keyId} no longer works`,
      ]);
    });
  }));
}

function renderKeys(keys: KeyInfo[], dim: (s: string) => string, withProject = false): string {
  if (keys.length === 0) return withProject ? 'no API keys in this tenant' : 'no API keys in this project';
  const rows = keys.map((k) => {
    const cells = [k.key_id, k.name, k.role, `${k.prefix}…`, k.status, k.created_at.slice(0, 10), k.expires_at?.slice(0, 10) ?? '-', k.max_patterns === null ? '-' : String(k.max_patterns)];
    if (withProject) cells.splice(1, 0, k.project_id);
    return k.status === 'active' ? cells : cells.map((cell) => dim(cell));
  });
  const headers = ['key id', 'name', 'role', 'prefix', 'status', 'created', 'expires', 'max patterns'];
  if (withProject) headers.splice(1, 0, 'project');
  return table(headers, rows);
}
