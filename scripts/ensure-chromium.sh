#!/usr/bin/env bash
# Makes sure a headless-capable Chromium is installed for the dashboard's
# browser tests (dashboard/browsertest), installing Debian's chromium package
# with apt-get when it is missing. The tests start their own browser; this
# script never starts one.
set -euo pipefail
. "$(dirname "$0")/apt.sh"

have() { command -v "$1" >/dev/null 2>&1; }

if ! have chromium && ! have chromium-browser && ! have google-chrome; then
  echo "ensure-chromium: Chromium (or Chrome) is missing (for the dashboard's browser tests)" >&2
  apt_install ensure-chromium chromium fonts-dejavu-core
fi
