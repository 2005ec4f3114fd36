/**
 * The first minutes of a new user (issue 29 items 2–5): the second program name and its
 * completion, npx from the checkout without an npm warning or a rebuild, another project
 * installing the checkout without rewriting its dist/, and a missing build as one line.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../support/cli.js';
import { childEnv, tempDir } from '../support/env.js';

const run = promisify(execFile);
const ROOT = join(BIN, '..', '..');
const AGENT_MEMORY = join(ROOT, 'bin', 'agent-memory.js');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
const buildInfo = () => readFileSync(join(ROOT, 'dist', 'build-info.json'), 'utf8');

/** The environment of a user's shell: none of the npm_* variables `npm test` sets for us. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = childEnv();
  for (const name of Object.keys(env)) if (name.startsWith('npm_') || name === 'INIT_CWD') delete env[name];
  return { ...env, ...extra };
}

let dir: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  dir = await tempDir('svc-first-run-');
});
afterAll(async () => {
  await dir?.remove();
});

describe('agent-memory: the same program under a name no system tool has', () => {
  it('is a bin of the package and names itself in help, errors and completion', async () => {
    expect(pkg.bin).toEqual({ service: 'bin/service.js', 'agent-memory': 'bin/agent-memory.js' });
    const help = spawnSync(process.execPath, [AGENT_MEMORY, '--help'], { env: childEnv(), encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: agent-memory /);
    const usage = spawnSync(process.execPath, [AGENT_MEMORY, 'recall', '--limit'], { env: childEnv(), encoding: 'utf8' });
    expect(usage.status).toBe(2);
  });

  it('its bash completion completes agent-memory and leaves the system service alone; service\'s still works', async () => {
    const script = join(dir.path, 'agent-memory.bash');
    const printed = spawnSync(process.execPath, [AGENT_MEMORY, 'completion', 'bash'], { env: childEnv(), encoding: 'utf8' });
    expect(printed.status).toBe(0);
    await writeFile(script, printed.stdout);
    const complete = (words: string[]) => spawnSync('bash', ['-c', [
      `source ${script}`,
      'complete -p service >/dev/null 2>&1 && echo "service is taken" >&2',
      'complete -p agent-memory >&2',
      `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _agent_memory_completion; echo "\${COMPREPLY[*]}"`,
    ].join('\n')], { encoding: 'utf8' });
    const res = complete(['agent-memory', 'keys', 're']);
    expect(res.stderr).toContain('complete -F _agent_memory_completion agent-memory');
    expect(res.stderr).not.toContain('service is taken');
    expect(res.stdout.trim()).toBe('revoke');
    expect(complete(['agent-memory', 'pat']).stdout.trim()).toBe('patterns');

    for (const shell of ['zsh', 'fish']) {
      const other = spawnSync(process.execPath, [AGENT_MEMORY, 'completion', shell], { env: childEnv(), encoding: 'utf8' });
      expect(other.stdout).toMatch(shell === 'zsh' ? /^#compdef agent-memory$/m : /^complete -c agent-memory -f$/m);
      expect(other.stdout).not.toMatch(/complete -c service|#compdef service/);
    }
    const service = await runCli(['completion', 'bash']);
    expect(service.stdout).toContain('complete -F _service_completion service');
  });
});

describe('npx and installs from the checkout', () => {
  it('npx service / npx agent-memory in the checkout: no npm warning, no rebuild (first call included)', async () => {
    const before = buildInfo();
    // An empty npm cache: the first call installs the checkout into npx's folder, as a new user's does.
    const cache = join(dir.path, 'npm-cache');
    for (const name of ['service', 'agent-memory', 'service']) {
      const res = await run('npx', ['--offline', name, '--version'], { cwd: ROOT, env: userEnv({ npm_config_cache: cache }) });
      expect(res.stdout.trim()).toBe(pkg.version);
      expect(res.stderr).not.toMatch(/npm warn/i);
    }
    expect(buildInfo()).toBe(before);
  }, 120_000);

  it('prepare run for another project (npx, npm install <checkout>) keeps dist/ and says so', async () => {
    const before = buildInfo();
    for (const env of [
      { npm_command: 'exec', npm_config_local_prefix: ROOT },
      { npm_command: 'install', npm_config_local_prefix: dir.path },
      { npm_command: 'link', npm_config_local_prefix: ROOT },
    ]) {
      const res = spawnSync(process.execPath, [join(ROOT, 'scripts', 'prepare.mjs')], { env: userEnv(env), encoding: 'utf8' });
      expect(res.status).toBe(0);
      expect(res.stderr).toMatch(/^agent-memory-service: using the build in .*dist \(built .*\); run `npm run build` there/);
    }
    expect(buildInfo()).toBe(before);
  });

  it('npm install <checkout> from another project leaves the checkout\'s dist/ as it was; its bins run', async () => {
    const before = buildInfo();
    const project = join(dir.path, 'consumer');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', ROOT], { cwd: project, env: userEnv() });
    expect(buildInfo()).toBe(before);
    for (const name of ['service', 'agent-memory']) {
      const res = await run(join(project, 'node_modules', '.bin', name), ['--version'], { env: userEnv() });
      expect(res.stdout.trim()).toBe(pkg.version);
    }
  }, 120_000);
});

describe('a rebuild while the CLI runs', () => {
  it('every CLI started during `npm run build` runs (the build moves into dist/ file by file)', async () => {
    const build = spawn(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, env: userEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    let buildErr = '';
    build.stderr.setEncoding('utf8').on('data', (s: string) => (buildErr += s));
    let done = false;
    const built = new Promise<number | null>((resolve) => build.on('close', (code) => {
      done = true;
      resolve(code);
    }));
    // `completion bash` loads every command's chunk; run it back to back until the build is done.
    const failures: string[] = [];
    let runs = 0;
    while (!done || runs === 0) {
      const res = await runCli(['completion', 'bash']);
      runs++;
      if (res.code !== 0 || !res.stdout.includes('complete -F _service_completion service')) failures.push(`exit ${res.code}: ${res.stderr}`);
    }
    expect(await built, buildErr).toBe(0);
    expect(failures).toEqual([]);
    expect(runs).toBeGreaterThan(1);
  }, 300_000);
});

describe('a missing build', () => {
  it('is one line on stderr naming the command to run, exit 1, no stack trace', async () => {
    const copy = join(dir.path, 'no-build');
    await cp(join(ROOT, 'bin'), join(copy, 'bin'), { recursive: true });
    await cp(join(ROOT, 'package.json'), join(copy, 'package.json'));
    for (const [bin, name] of [['service.js', 'service'], ['agent-memory.js', 'agent-memory']]) {
      const res = spawnSync(process.execPath, [join(copy, 'bin', bin), 'recall', 'x'], { env: childEnv(), encoding: 'utf8' });
      expect(res.status).toBe(1);
      expect(res.stderr.trimEnd().split('\n')).toEqual([`${name}: the build in ${join(copy, 'dist')}/ is missing or incomplete: run \`npm run build\` in ${copy}`]);
    }
  });
});
