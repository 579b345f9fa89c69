# Sourced by the ensure-*.sh scripts.
#
# apt_install NAME PACKAGE... installs Debian packages with apt-get, as root
# or through sudo; where that is not possible it says what to install by
# hand and fails. NAME prefixes its messages.
apt_install() {
  local name=$1
  shift
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$name: apt-get is not available: install $* (or their equivalents) and rerun." >&2
    return 1
  fi
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "$name: need root or sudo to apt-get install $*" >&2; return 1; }
    sudo="sudo"
  fi
  echo "$name: installing $* with apt-get" >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
