/**
 * Container smoke test: builds the Dockerfile with podman and runs the image (learn, recall,
 * its HEALTHCHECK), following ../shared-independent steps that work on a machine with no
 * registry (a Debian base made with debootstrap, npm installing from the host's cache).
 * Skips with a message where podman, runc or debootstrap is missing, or the base cannot be
 * made; once the base exists, a failing build or run fails the test.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const BASE = 'docker.io/library/node:20-bookworm-slim';
const IMAGE = 'localhost/agent-memory-service:smoke';

function has(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

const missing = ['podman', 'runc', 'debootstrap'].filter((c) => !has(c));
if (missing.length > 0) console.warn(`\n[skip] container smoke test: ${missing.join(', ')} not installed (apt-get install podman runc debootstrap)\n`);

const conf = join(mkdtempSync(join(tmpdir(), 'svc-podman-')), 'containers.conf');
writeFileSync(conf, '[containers]\ndefault_ulimits = []\n\n[engine]\ncgroup_manager = "cgroupfs"\n');
const env = { ...process.env, CONTAINERS_CONF: conf };
const podman = (args: string[], timeout = 600_000) => run('podman', ['--runtime', 'runc', ...args], { env, timeout, maxBuffer: 64 * 1024 * 1024 });

/** The base image, made from Debian's packages with the machine's own Node (no registry). */
async function ensureBase(): Promise<string | null> {
  if ((await podman(['image', 'exists', BASE]).then(() => true, () => false))) return null;
  const root = mkdtempSync(join(tmpdir(), 'svc-base-'));
  try {
    const mirror = spawnSync('sh', ['-c', "grep -rhoE 'https?://[^ ]+' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | grep -m1 debian"]).stdout.toString().trim() || 'http://deb.debian.org/debian';
    await run('debootstrap', ['--variant=minbase', 'bookworm', root, mirror], { timeout: 600_000 });
    await run('chroot', [root, 'sh', '-c', 'apt-get install -y -qq libstdc++6 ca-certificates >/dev/null'], { timeout: 600_000 });
    const nodeBin = process.execPath;
    const npmRoot = spawnSync('npm', ['root', '-g']).stdout.toString().trim();
    await run('sh', ['-c', `mkdir -p ${root}/usr/local/bin ${root}/usr/local/lib/node_modules && cp ${nodeBin} ${root}/usr/local/bin/node && cp -a ${npmRoot}/npm ${root}/usr/local/lib/node_modules/ && ln -sf ../lib/node_modules/npm/bin/npm-cli.js ${root}/usr/local/bin/npm`]);
    await run('sh', ['-c', `tar -C ${root} -c . | podman --runtime runc import --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' - ${BASE}`], { env, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 });
    return null;
  } catch (err) {
    return `the base image could not be made here: ${(err as Error).message.split('\n')[0]}`;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const baseProblem = missing.length === 0 ? await ensureBase() : 'tools missing';
if (missing.length === 0 && baseProblem) console.warn(`\n[skip] container smoke test: ${baseProblem}\n`);
const canRun = missing.length === 0 && baseProblem === null && existsSync(join(ROOT, 'models'));

describe.skipIf(!canRun)('container image', () => {
  const name = `svc-smoke-${process.pid}`;
  afterAll(async () => {
    await podman(['rm', '-f', name]).catch(() => undefined);
  });

  it('builds offline, runs as non-root, learns and recalls, and passes its HEALTHCHECK', async () => {
    await podman(['build', '--format', 'docker', '--pull=never', '--network', 'none', '-v', `${join(homedir(), '.npm')}:/root/.npm`,
      '--build-arg', 'NPM_FLAGS=--offline', '-t', IMAGE, ROOT], 1_200_000);
    const port = 18_000 + (process.pid % 1000);
    await podman(['run', '-d', '--name', name, '--pull=never', '--network', 'host',
      '-e', `SERVICE_PORT=${port}`, '-e', 'SERVICE_HOST=127.0.0.1', '-e', 'SERVICE_AUTH_MODE=dev', '-e', 'SERVICE_ALLOW_NO_AUTH=true', '-e', 'SERVICE_LLM_PROVIDER=none',
      IMAGE]);
    const base = `http://127.0.0.1:${port}`;
    let up = false;
    for (let i = 0; i < 120 && !up; i++) {
      up = await fetch(`${base}/v1/version`).then((r) => r.ok, () => false);
      if (!up) await new Promise((r) => setTimeout(r, 500));
    }
    expect(up, (await podman(['logs', name]).catch((e: Error) => ({ stdout: e.message }))).stdout).toBe(true);

    const json = { 'content-type': 'application/json' };
    const learned = await fetch(`${base}/v1/learn`, { method: 'POST', headers: json, body: JSON.stringify({ task: 'rotate the nginx logs daily', code: 'logrotate -f /etc/logrotate.conf', eval_score: 9 }) });
    expect(learned.status).toBe(200);
    const recalled = (await (await fetch(`${base}/v1/recall`, { method: "POST", headers: json, body: JSON.stringify({ task: "rotate nginx logs every day" }) })).json()) as { matches: { pattern: { code: string } }[] };
    expect(recalled.matches[0].pattern.code).toContain('logrotate');
    // The web console is inside the image (built by the image's npm run build), CSP and all.
    const page = await fetch(`${base}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const script = (await page.text()).match(/\/console\/assets\/app-[0-9a-f]+\.js/)?.[0];
    expect(script).toBeDefined();
    expect((await fetch(`${base}${script}`)).status).toBe(200);

    const user = (await podman(['exec', name, 'id', '-u'])).stdout.trim();
    expect(user).toBe('10001');
    await podman(['healthcheck', 'run', name]); // exit 0 = healthy (throws otherwise)
  }, 1_800_000);
});
