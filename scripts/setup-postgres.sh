#!/usr/bin/env bash
# Prepares the local PostgreSQL 15 for the test suite and benchmark: server running on
# 127.0.0.1:5432, the pgvector extension installed, and a `test` database.
# Idempotent: when `CREATE EXTENSION vector` already works it changes nothing.
#
# Debian bookworm ships no pgvector package for PostgreSQL 15 built from a version new
# enough for iterative index scans (0.8+), so we build it from the trixie source package
# (Debian's own tarball, verified by apt) against bookworm's postgresql-server-dev-15.
# Must run as root (CI does). Connects as user postgres with trust auth.
set -euo pipefail

PG_MAJOR=15
PG_HOST=127.0.0.1
PG_PORT=5432
PG_CONFIG="/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config"
TEST_DB=test
SRC_SUITE=trixie
SRC_LIST=/etc/apt/sources.list.d/pgvector-${SRC_SUITE}-src

say() { printf '[setup-postgres] %s\n' "$*"; }
psql_q() { psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -v ON_ERROR_STOP=1 -qtAX "$@"; }

server_up() { pg_isready -h "$PG_HOST" -p "$PG_PORT" -q; }

ensure_server() {
  if server_up; then say "server already accepting connections on ${PG_HOST}:${PG_PORT}"; return; fi
  say "server not running: starting cluster ${PG_MAJOR}/main"
  pg_ctlcluster --skip-systemctl-redirect "$PG_MAJOR" main start
  for _ in $(seq 1 30); do server_up && { say "server started"; return; }; sleep 1; done
  say "server did not come up within 30 s"; exit 1
}

ensure_test_db() {
  if [ "$(psql_q -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '${TEST_DB}'")" = "1" ]; then
    say "database '${TEST_DB}' exists"
  else
    psql_q -d postgres -c "CREATE DATABASE ${TEST_DB}"
    say "created database '${TEST_DB}'"
  fi
}

vector_works() { psql_q -d "$TEST_DB" -c 'CREATE EXTENSION IF NOT EXISTS vector' >/dev/null 2>&1; }

vector_version() { psql_q -d "$TEST_DB" -c "SELECT extversion FROM pg_extension WHERE extname = 'vector'"; }

# Adds a deb-src entry for trixie in the style the machine already uses (deb822 or one-line).
add_source_entry() {
  local mirror="http://deb.debian.org/debian"
  if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
    local found
    found=$(grep -h '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
    [ -n "$found" ] && mirror="${found%/}"
    if [ ! -f "${SRC_LIST}.sources" ]; then
      printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$mirror" "$SRC_SUITE" > "${SRC_LIST}.sources"
      say "added deb-src entry ${SRC_LIST}.sources (${mirror} ${SRC_SUITE} main)"
    else
      say "deb-src entry ${SRC_LIST}.sources already present"
    fi
  else
    local found
    found=$(grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
    [ -n "$found" ] && mirror="${found%/}"
    if [ ! -f "${SRC_LIST}.list" ]; then
      echo "deb-src ${mirror} ${SRC_SUITE} main" > "${SRC_LIST}.list"
      say "added deb-src entry ${SRC_LIST}.list (${mirror} ${SRC_SUITE} main)"
    else
      say "deb-src entry ${SRC_LIST}.list already present"
    fi
  fi
}

build_pgvector() {
  export DEBIAN_FRONTEND=noninteractive
  add_source_entry
  say "apt-get update"
  apt-get update -qq
  say "installing build tools: dpkg-dev postgresql-server-dev-${PG_MAJOR} build-essential"
  apt-get install -y -qq dpkg-dev "postgresql-server-dev-${PG_MAJOR}" build-essential >/dev/null
  local work
  work=$(mktemp -d)
  # apt drops privileges to _apt for downloads; let it write into the work dir.
  chown _apt "$work" 2>/dev/null || true
  say "fetching pgvector source from ${SRC_SUITE} into ${work}"
  # pgvector/<suite> picks the trixie source even if other deb-src entries exist.
  (cd "$work" && apt-get source -qq "pgvector/${SRC_SUITE}" >/dev/null)
  local dir
  dir=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n1)
  [ -n "$dir" ] || { say "apt-get source produced no pgvector-* directory"; exit 1; }
  say "building $(basename "$dir") with ${PG_CONFIG}"
  make -s -C "$dir" PG_CONFIG="$PG_CONFIG" >/dev/null
  make -s -C "$dir" PG_CONFIG="$PG_CONFIG" install >/dev/null
  say "installed pgvector into $("$PG_CONFIG" --sharedir)/extension"
  rm -rf "$work"
}

ensure_server
ensure_test_db
if vector_works; then
  say "pgvector already available (version $(vector_version)): nothing to build"
  exit 0
fi
say "pgvector not available: building it"
build_pgvector
if vector_works; then
  say "CREATE EXTENSION vector works in '${TEST_DB}' (version $(vector_version))"
else
  say "CREATE EXTENSION vector still fails after the build:"
  psql_q -d "$TEST_DB" -c 'CREATE EXTENSION IF NOT EXISTS vector' || true
  exit 1
fi
