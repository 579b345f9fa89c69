#!/usr/bin/env bash
# Makes sure redis-server (7.0 or newer) and redis-sentinel are installed,
# installing Debian's packages with apt-get when they are missing. The tests
# start their own servers; this script never starts one.
set -euo pipefail
. "$(dirname "$0")/apt.sh"

have() { command -v "$1" >/dev/null 2>&1; }

if ! have redis-server || ! have redis-sentinel; then
  echo "ensure-redis: redis-server or redis-sentinel is missing (dtq's tests need Redis 7.0 or newer)" >&2
  apt_install ensure-redis redis-server redis-tools redis-sentinel
fi

version=$(redis-server --version | sed -n 's/.*v=\([0-9][0-9]*\)\..*/\1/p')
if [ -z "$version" ] || [ "$version" -lt 7 ]; then
  echo "ensure-redis: $(redis-server --version) is too old: dtq needs Redis 7.0 or newer" >&2
  exit 1
fi

# The deployment test reads compose.yaml with Python's YAML parser.
if ! python3 -c 'import yaml' >/dev/null 2>&1; then
  echo "ensure-redis: python3 with the yaml module is missing (for the compose.yaml test)" >&2
  apt_install ensure-redis python3-yaml
fi
