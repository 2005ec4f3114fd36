// npm runs `prepare` after `npm ci` / `npm install` in this checkout, and then it builds. It
// also runs it when ANOTHER project installs the checkout as a folder (`npx service` from the
// checkout, `npm install ../this-checkout`, `npm link`): then the checkout's own dist/ is used as it is,
// never rebuilt behind the user's back, and a line on stderr says so. Only a checkout with no
// build yet is built then (into a scratch folder first: scripts/build.mjs), saying so.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = realpathSync(join(dirname(fileURLToPath(import.meta.url)), '..'));
const dist = join(root, 'dist');
const canonical = (path) => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};
// npm sets npm_config_local_prefix to the project being installed. A build that exists is
// rebuilt only by an install of the checkout itself (`npm ci`, `npm install`) and by
// `npm pack` / `npm publish`; npx (npm_command `exec`, even in the checkout) and `npm link`
// use it as it is.
const REBUILDING_COMMANDS = new Set(['ci', 'install', 'pack', 'publish']);
const command = process.env.npm_command;
const installer = process.env.npm_config_local_prefix;
const ownInstall = command === undefined || (REBUILDING_COMMANDS.has(command) && (installer === undefined || canonical(installer) === root));

function builtAt() {
  if (!existsSync(join(dist, 'cli', 'entry.js'))) return null;
  try {
    return JSON.parse(readFileSync(join(dist, 'build-info.json'), 'utf8')).build_time ?? 'unknown';
  } catch {
    return null;
  }
}

const built = ownInstall ? null : builtAt();
if (built !== null) {
  process.stderr.write(`agent-memory-service: using the build in ${dist} (built ${built}); run \`npm run build\` there after changing its sources\n`);
} else {
  if (!ownInstall) process.stderr.write(`agent-memory-service: no build in ${dist} yet: building it (npm run build, about 20 s)\n`);
  await import('./build.mjs');
}
