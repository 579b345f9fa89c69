#!/usr/bin/env bash
# Makes sure a headless-capable Chromium is installed for the dashboard's
# browser tests (dashboard/browsertest), installing Debian's chromium package
# with apt-get when it is missing. The tests start their own browser; this
# script never starts one.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }

if ! have chromium && ! have chromium-browser && ! have google-chrome; then
  if ! have apt-get; then
    echo "ensure-chromium: chromium is missing and apt-get is not available." >&2
    echo "ensure-chromium: install Chromium (or Chrome) for the dashboard's browser tests and rerun." >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    have sudo || { echo "ensure-chromium: need root or sudo to apt-get install chromium" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "ensure-chromium: installing chromium and fonts with apt-get" >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
fi
