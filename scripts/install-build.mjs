// Moves a finished build into dist/ without ever leaving dist/ incomplete: every file is
// renamed into place (rename replaces a file atomically), the entry points last. A CLI that
// starts meanwhile sees either the old entry with its chunks or the new one with its chunks;
// one that already runs keeps finding the chunks it imports later, because files the new
// build no longer has are only deleted an hour after they were superseded (the ledger
// dist/.superseded.json remembers since when).
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const LEDGER = '.superseded.json';
/** How long a superseded file stays for processes started from the build before. */
export const GRACE_MS = 60 * 60 * 1000;
/** Moved last: the files a process opens first. */
const ENTRY_POINTS = ['cli/entry.js', 'build-info.json'];

/** Every file under `dir`, as paths relative to it with `/` separators. */
function filesUnder(dir, prefix = '') {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const rel = prefix + entry.name;
    return entry.isDirectory() ? filesUnder(join(dir, entry.name), `${rel}/`) : [rel];
  });
}

function readLedger(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return {};
  }
}

/** Moves every file of `from` into `to` (created when missing); `from` is left empty. */
export function installBuild(from, to, now = Date.now()) {
  const fresh = filesUnder(from);
  const before = filesUnder(to).filter((rel) => rel !== LEDGER);
  const ordered = [...fresh.filter((rel) => !ENTRY_POINTS.includes(rel)), ...ENTRY_POINTS.filter((rel) => fresh.includes(rel))];
  for (const rel of ordered) {
    mkdirSync(dirname(join(to, rel)), { recursive: true });
    renameSync(join(from, rel), join(to, rel));
  }

  const freshSet = new Set(fresh);
  const ledgerPath = join(to, LEDGER);
  const old = readLedger(ledgerPath);
  const ledger = {};
  for (const rel of before) {
    if (freshSet.has(rel)) continue;
    const since = typeof old[rel] === 'number' ? old[rel] : now;
    if (now - since >= GRACE_MS) rmSync(join(to, rel), { force: true });
    else ledger[rel] = since;
  }
  const tmp = `${ledgerPath}.${process.pid}`;
  writeFileSync(tmp, JSON.stringify(ledger, null, 1) + '\n');
  renameSync(tmp, ledgerPath);
}
