#!/usr/bin/env bash
# Makes sure PostgreSQL's server binaries (initdb, postgres) are installed,
# installing Debian's postgresql package with apt-get when they are missing.
# The outbox tests (internal/pgtest) run initdb into a temporary directory and
# start their own server on a free port; this script never starts one. As
# root, the tests run PostgreSQL as the "postgres" user the package creates.
set -euo pipefail
. "$(dirname "$0")/apt.sh"

have_initdb() {
  command -v initdb >/dev/null 2>&1 && return 0
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

if ! have_initdb; then
  echo "ensure-postgres: initdb is missing (the outbox tests start their own PostgreSQL)" >&2
  apt_install ensure-postgres postgresql
fi

if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
  echo "ensure-postgres: running as root with no postgres user to run PostgreSQL as (reinstall Debian's postgresql, which creates it)" >&2
  exit 1
fi
