#!/usr/bin/env bash
# Makes sure redis-server (7.0 or newer) and redis-sentinel are installed,
# installing Debian's packages with apt-get when they are missing. The tests
# start their own servers; this script never starts one.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }

if ! have redis-server || ! have redis-sentinel; then
  if ! have apt-get; then
    echo "ensure-redis: redis-server is missing and apt-get is not available." >&2
    echo "ensure-redis: install Redis 7.0 or newer (redis-server, redis-tools, redis-sentinel) and rerun." >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    have sudo || { echo "ensure-redis: need root or sudo to apt-get install redis-server" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "ensure-redis: installing redis-server, redis-tools, redis-sentinel with apt-get" >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools redis-sentinel >/dev/null
fi

version=$(redis-server --version | sed -n 's/.*v=\([0-9][0-9]*\)\..*/\1/p')
if [ -z "$version" ] || [ "$version" -lt 7 ]; then
  echo "ensure-redis: $(redis-server --version) is too old: dtq needs Redis 7.0 or newer" >&2
  exit 1
fi

# The deployment test reads compose.yaml with Python's YAML parser.
if ! python3 -c 'import yaml' >/dev/null 2>&1; then
  if have apt-get; then
    sudo=""
    [ "$(id -u)" != 0 ] && have sudo && sudo="sudo"
    echo "ensure-redis: installing python3-yaml with apt-get (for the compose.yaml test)" >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-yaml >/dev/null ||
      { $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-yaml >/dev/null; }
  else
    echo "ensure-redis: python3 with the yaml module is missing and apt-get is not available" >&2
    exit 1
  fi
fi
