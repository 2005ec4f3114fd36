/**
 * The API key lifecycle through the real binary against a real DB-mode server (PostgreSQL):
 * bootstrap → keys create → use → rotate → old key 401 → revoke → 401, expiry, and the
 * prompts (only on a terminal, never in scripts).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli, stripAnsi } from '../support/cli.js';
import { childEnv, tempDir } from '../support/env.js';
import { adminQuery, createMigratedSchema, createTestDatabase, requirePostgres, type TestDatabase, type TestSchema } from '../support/pg.js';
import { startServer, type ServerHandle } from '../support/server.js';

const hasPg = await requirePostgres('CLI key lifecycle');
const TOKEN = 'cli-bootstrap-token-0123456789-abcdefghij';
const KEY = /^svc_[A-Za-z0-9_-]{43}$/;

interface Issued { key_id: string; secret: string; role: string; name?: string; status?: string }

/**
 * Runs the CLI under a pseudo-terminal and types `answers` one by one, each once `prompt`
 * text shows up (util-linux `script` forwards its stdin to the terminal).
 */
function runWithAnswers(args: string[], answers: { after: string; type: string }[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const child = spawn('script', ['-qec', [process.execPath, BIN, ...args].map(quote).join(' '), '/dev/null'], {
    env: childEnv({ TERM: 'xterm-256color', ...env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const pending = [...answers];
  const onData = (s: string) => {
    output += s;
    while (pending.length > 0 && output.includes(pending[0].after)) child.stdin.write(pending.shift()!.type);
  };
  child.stdout.setEncoding('utf8').on('data', onData);
  child.stderr.setEncoding('utf8').on('data', onData);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      child.stdin.destroy();
      resolve({ code, output });
    });
  });
}

/** Terminal output as plain words: no escape sequences, wrapped lines joined. */
const flat = (output: string) => stripAnsi(output).replace(/\s+/g, ' ');

describe.skipIf(!hasPg)('service bootstrap / service keys', () => {
  let db: TestDatabase;
  let schema: TestSchema;
  let dir: { path: string; remove(): Promise<void> };
  let server: ServerHandle;
  let owner: Issued;
  const cli = (args: string[], env: Record<string, string | undefined> = {}) => runCli([...args, '--url', server.url], { env });
  const health = (secret: string) => cli(['health', '--api-key', secret]);

  beforeAll(async () => {
    db = await createTestDatabase('cli_keys');
    schema = await createMigratedSchema(db, 'cli_keys');
    dir = await tempDir('cli-keys-');
    server = await startServer({
      dataPath: join(dir.path, 'data'),
      env: { SERVICE_STORAGE: 'postgres', SERVICE_DATABASE_URL: schema.url, SERVICE_BOOTSTRAP_TOKEN: TOKEN },
    });
  });
  afterAll(async () => {
    await server?.stop();
    await dir?.remove();
    await db?.drop();
  });

  it('logs a reminder to remove the bootstrap token at startup', () => {
    expect(server.stderr()).toMatch(/SERVICE_BOOTSTRAP_TOKEN is set: run `service bootstrap` once, then remove the token/);
  });

  it('never prompts for the token without a terminal or under CI: exit 2 with a usage message', async () => {
    for (const env of [{}, { CI: 'true' }]) {
      const res = await cli(['bootstrap'], env);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/no bootstrap token: pass --token or set SERVICE_BOOTSTRAP_TOKEN/);
    }
  });

  it('bootstrap prints the owner secret once, with a warning; a second bootstrap fails (409 → exit 1)', async () => {
    const res = await cli(['bootstrap'], { SERVICE_BOOTSTRAP_TOKEN: TOKEN });
    expect(res.code).toBe(0);
    owner = JSON.parse(res.stdout) as Issued;
    expect(owner.role).toBe('owner');
    expect(owner.secret).toMatch(KEY);
    expect(res.stderr).toMatch(/shown only this once/);
    expect(res.stderr).toMatch(/remove SERVICE_BOOTSTRAP_TOKEN/);

    const again = await cli(['bootstrap', '--token', TOKEN]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already bootstrapped/);
    const wrong = await cli(['bootstrap', '--token', `${TOKEN}x`]);
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toMatch(/invalid bootstrap token/);
    // The hint is about the token, not about API keys.
    expect(wrong.stderr).toMatch(/hint: the token must equal the server's SERVICE_BOOTSTRAP_TOKEN/);
    expect(wrong.stderr).not.toContain('--api-key');
  });

  it('create → use → rotate → old key 401 → revoke → 401', async () => {
    const created = await cli(['keys', 'create', '--name', 'ci agent', '--role', 'editor', '--api-key', owner.secret]);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout) as Issued;
    expect(key).toMatchObject({ name: 'ci agent', role: 'editor', status: 'active' });
    expect(created.stderr).toMatch(/shown only this once/);

    const learned = await cli(['learn', '--task', 'deduplicate customer records by email', '--code', 'dedupe()', '--eval-score', '8', '--api-key', key.secret]);
    expect(learned.code).toBe(0);

    const listed = await cli(['keys', 'list', '--api-key', owner.secret]);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).keys.map((k: Issued) => k.key_id)).toEqual([owner.key_id, key.key_id]);
    expect(listed.stdout).not.toContain(key.secret);

    // Rotation kills the old secret at once: like revoke, it is not done without --yes.
    const unconfirmedRotation = await cli(['keys', 'rotate', key.key_id, '--api-key', owner.secret]);
    expect(unconfirmedRotation.code).toBe(2);
    expect(unconfirmedRotation.stderr).toMatch(/refusing to rotate .* without confirmation: pass --yes/);
    expect((await health(key.secret)).code).toBe(0);

    const rotated = await cli(['keys', 'rotate', key.key_id, '--yes', '--api-key', owner.secret]);
    expect(rotated.code).toBe(0);
    const next = JSON.parse(rotated.stdout) as Issued;
    expect(next.secret).toMatch(KEY);
    expect(next.secret).not.toBe(key.secret);
    expect(next.key_id).toBe(key.key_id);

    const old = await health(key.secret);
    expect(old.code).toBe(3);
    expect(old.stderr).toMatch(/invalid API key/);
    expect((await health(next.secret)).code).toBe(0);

    const unconfirmed = await cli(['keys', 'revoke', next.key_id, '--api-key', owner.secret]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(/without confirmation: pass --yes/);
    expect((await health(next.secret)).code).toBe(0);

    const revoked = await cli(['keys', 'revoke', next.key_id, '--yes', '--api-key', owner.secret]);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ key_id: next.key_id, status: 'revoked' });
    const after = await health(next.secret);
    expect(after.code).toBe(3);
    expect(after.stderr).toMatch(/API key revoked/);

    const twice = await cli(['keys', 'revoke', next.key_id, '--yes', '--api-key', owner.secret]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/already revoked/);
  });

  it('an expired key is refused (exit 3); an editor cannot manage keys (exit 3, 403)', async () => {
    const created = await cli(['keys', 'create', '--name', 'temp', '--expires-at', '2099-01-01T00:00:00Z', '--api-key', owner.secret]);
    const key = JSON.parse(created.stdout) as Issued;
    expect((await health(key.secret)).code).toBe(0);
    await adminQuery("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [key.key_id], schema.url);
    const expired = await health(key.secret);
    expect(expired.code).toBe(3);
    expect(expired.stderr).toMatch(/API key expired/);

    const editor = JSON.parse((await cli(['keys', 'create', '--name', 'ed', '--api-key', owner.secret])).stdout) as Issued;
    const denied = await cli(['keys', 'list', '--api-key', editor.secret]);
    expect(denied.code).toBe(3);
    expect(denied.stderr).toMatch(/"keys:list"/);
  });

  it('an owner lists, rotates and revokes a key it created for another project; an admin cannot', async () => {
    const leaked = JSON.parse((await cli(['keys', 'create', '--name', 'leaked', '--for-project', 'other', '--api-key', owner.secret])).stdout) as Issued & { project_id: string };
    expect(leaked.project_id).toBe('other');

    const other = await cli(['keys', 'list', '--for-project', 'other', '--api-key', owner.secret]);
    expect(other.code).toBe(0);
    expect(JSON.parse(other.stdout).keys.map((k: Issued) => k.key_id)).toEqual([leaked.key_id]);
    const all = await cli(['keys', 'list', '--all-projects', '--format', 'table', '--api-key', owner.secret]);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^key id\s+project\s+name/);
    expect(all.stdout).toMatch(new RegExp(`${leaked.key_id}\\s+other\\s+leaked`));

    const rotated = await cli(['keys', 'rotate', leaked.key_id, '--yes', '--api-key', owner.secret]);
    expect(rotated.code).toBe(0);
    const revoked = await cli(['keys', 'revoke', leaked.key_id, '--yes', '--api-key', owner.secret]);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ key_id: leaked.key_id, status: 'revoked', project_id: 'other' });
    expect((await health((JSON.parse(rotated.stdout) as Issued).secret)).code).toBe(3);

    // --project names the request's project: a DB key is bound to its own, and the hint says what to use instead.
    const bound = await cli(['keys', 'list', '--project', 'other', '--api-key', owner.secret]);
    expect(bound.code).toBe(3);
    expect(bound.stderr).toMatch(/hint: drop --project.*--for-project/);

    const admin = JSON.parse((await cli(['keys', 'create', '--name', 'adm', '--role', 'admin', '--api-key', owner.secret])).stdout) as Issued;
    const refused = await cli(['keys', 'list', '--for-project', 'other', '--api-key', admin.secret]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/only owner keys can manage keys of another project/);
    const notHers = await cli(['keys', 'revoke', leaked.key_id, '--yes', '--api-key', admin.secret]);
    expect(notHers.code).toBe(4);

    // A dry run of deleting the caller's own scope warns that its own key goes with it.
    const dry = await cli(['governance', 'delete-scope', '--dry-run', '--api-key', admin.secret]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true });
    expect(dry.stderr).toMatch(/^warning: your own API key is among the keys this deletion would revoke/m);
  });

  it('on a terminal: asks for the token (hidden) and confirms a revocation', async () => {
    const asked = await runWithAnswers(['bootstrap', '--url', server.url], [{ after: 'Bootstrap token', type: `${TOKEN}\r` }]);
    // The typed token reached the server: already bootstrapped (409), not refused as invalid (401).
    expect(asked.output).toMatch(/already bootstrapped/);
    expect(asked.output).not.toContain(TOKEN);
    expect(asked.code).toBe(1);

    const key = JSON.parse((await cli(['keys', 'create', '--name', 'keep me', '--api-key', owner.secret])).stdout) as Issued;
    const declined = await runWithAnswers(['keys', 'revoke', key.key_id, '--url', server.url, '--api-key', owner.secret], [{ after: 'Revoke API key', type: 'n\r' }]);
    expect(declined.output).toMatch(/cancelled: nothing was changed/);
    expect(declined.code).toBe(1);
    expect((await health(key.secret)).code).toBe(0);

    const accepted = await runWithAnswers(['keys', 'revoke', key.key_id, '--url', server.url, '--api-key', owner.secret], [{ after: 'Revoke API key', type: 'y\r' }]);
    expect(accepted.code).toBe(0);
    expect(accepted.output).toMatch(new RegExp(`revoked ${key.key_id}`));
    expect((await health(key.secret)).code).toBe(3);
  });

  it('on a terminal: rotate asks like revoke, and both questions name the key (name, role, prefix)', async () => {
    const key = JSON.parse((await cli(['keys', 'create', '--name', 'nightly job', '--role', 'reader', '--api-key', owner.secret])).stdout) as Issued & { prefix: string };
    const named = `API key "nightly job" (role reader, prefix ${key.prefix}…, project default, id ${key.key_id})`;

    const declined = await runWithAnswers(['keys', 'rotate', key.key_id, '--url', server.url, '--api-key', owner.secret], [{ after: 'Rotate API key', type: 'n\r' }]);
    // The prompt wraps at the terminal's width: compare the words.
    expect(flat(declined.output)).toContain(`Rotate ${named}?`);
    expect(declined.output).toMatch(/cancelled: nothing was changed/);
    expect(declined.code).toBe(1);
    expect((await health(key.secret)).code).toBe(0);

    const accepted = await runWithAnswers(['keys', 'rotate', key.key_id, '--format', 'table', '--url', server.url, '--api-key', owner.secret], [{ after: 'Rotate API key', type: 'y\r' }]);
    expect(accepted.code).toBe(0);
    // The same key, a new secret: the line says so instead of calling the same id "new".
    expect(flat(accepted.output)).toContain(`new secret for key "nightly job": ${key.key_id} (role reader)`);
    expect(accepted.output).not.toMatch(/new key id/);
    expect((await health(key.secret)).code).toBe(3);

    const revoke = await runWithAnswers(['keys', 'revoke', key.key_id, '--url', server.url, '--api-key', owner.secret], [{ after: 'Revoke API key', type: 'n\r' }]);
    expect(flat(revoke.output)).toMatch(new RegExp(`Revoke API key "nightly job" \\(role reader, prefix [^,]+…, project default, id ${key.key_id}\\)\\?`));
    expect(revoke.code).toBe(1);
  });
});
