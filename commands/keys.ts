import { Option, type Command } from 'commander';
import type { KeyInfo, ServiceClient } from '../src/client/index.js';
import { ROLES } from '../src/core/types.js';
import { action, ioOf, type Io } from './shared/context.js';
import { ExitCode } from './shared/exit-codes.js';
import { addClientOptions, integerIn, withClient, type ClientOptionValues } from './shared/options.js';
import { table } from './shared/output.js';
import { printIssuedSecret } from './key-secrets.js';
import { addYesOption, canPrompt, confirmDestructive, type YesOptionValues } from './shared/confirm.js';

interface CreateOptions extends ClientOptionValues {
  name: string;
  role?: string;
  maxPatterns?: number;
  expiresAt?: string;
  forProject?: string;
}

type KeyChangeOptions = ClientOptionValues & YesOptionValues;

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
  revoke.action(action(async (keyId: string, opts: KeyChangeOptions, command: Command) => {
    return withClient(opts, command, async (client, out) => {
      if (!(await confirmKeyChange(client, ioOf(command), opts, keyId, {
        verb: 'revoke',
        question: (key) => `Revoke ${key}? Requests using it will be refused at once.`,
      }))) return ExitCode.FAILURE;
      const revoked = await client.keys.revoke(keyId);
      out.result(revoked, () => `revoked ${revoked.key_id} ("${revoked.name}") at ${revoked.revoked_at}`);
    });
  }));

  const rotate = keys
    .command('rotate')
    .description('replace a key\'s secret: the same key (id, name, role, quota) gets a new secret, printed once; the old secret stops working at once (owner keys: any project of the tenant)')
    .argument('<key-id>', 'id of the key (see `service keys list`, `--all-projects` for an owner)');
  addYesOption(rotate);
  addClientOptions(rotate);
  rotate.action(action(async (keyId: string, opts: KeyChangeOptions, command: Command) => {
    return withClient(opts, command, async (client, out) => {
      if (!(await confirmKeyChange(client, ioOf(command), opts, keyId, {
        verb: 'rotate',
        question: (key) => `Rotate ${key}? Its current secret stops working at once; the new one is shown once.`,
      }))) return ExitCode.FAILURE;
      const issued = await client.keys.rotate(keyId);
      // Rotation keeps the key (same id); only the secret is new.
      printIssuedSecret(ioOf(command), out, issued, `new secret for key "${issued.name}"`, [
        `the old secret of ${issued.key_id} no longer works`,
      ]);
    });
  }));
}

/**
 * Asks before revoking or rotating, as confirmDestructive does (--yes skips; no terminal
 * and no --yes refuses before any request). On a terminal the question names the key by
 * its name, role, prefix and project, looked up first: a bare id says nothing to a person.
 */
async function confirmKeyChange(
  client: ServiceClient,
  io: Io,
  opts: YesOptionValues,
  keyId: string,
  what: { verb: string; question: (key: string) => string },
): Promise<boolean> {
  const ask = !opts.yes && canPrompt(io);
  const key = ask ? describeKey(await findKey(client, keyId), keyId) : `API key ${keyId}`;
  return confirmDestructive(io, opts, { action: `${what.verb} ${keyId}`, question: what.question(key) });
}

/** The key among those the caller may list: its project's, else (owner keys) the tenant's. */
async function findKey(client: ServiceClient, keyId: string): Promise<KeyInfo | null> {
  // The lookup only words the question: if it fails, the question shows the id and the
  // revoke/rotate request itself reports what is wrong.
  const own = (await client.keys.list().catch(() => null))?.keys.find((k) => k.key_id === keyId);
  if (own) return own;
  // Only owner keys may list every project; for others this answers 403 and the id is all we show.
  const all = await client.keys.list({ allProjects: true }).catch(() => null);
  return all?.keys.find((k) => k.key_id === keyId) ?? null;
}

function describeKey(key: KeyInfo | null, keyId: string): string {
  if (!key) return `API key ${keyId} (not among the keys you can list)`;
  return `API key "${key.name}" (role ${key.role}, prefix ${key.prefix}…, project ${key.project_id}, id ${key.key_id})`;
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
