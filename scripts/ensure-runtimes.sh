#!/usr/bin/env bash
# Makes sure Python 3 and Node.js are installed for the example workers in
# other languages (examples/workers), installing Debian's packages with
# apt-get when one is missing.
set -euo pipefail
. "$(dirname "$0")/apt.sh"

have() { command -v "$1" >/dev/null 2>&1; }

missing=()
have python3 || missing+=(python3)
{ have python3 && python3 -m pip --version; } >/dev/null 2>&1 || missing+=(python3-pip) # clients/python's install test
have node || missing+=(nodejs)
have npm || missing+=(npm) # clients/typescript's test runs npm ci for its pinned tsc
if [ ${#missing[@]} -gt 0 ]; then
  echo "ensure-runtimes: ${missing[*]} missing (for examples/workers)" >&2
  apt_install ensure-runtimes "${missing[@]}"
fi
