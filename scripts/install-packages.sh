#!/usr/bin/env bash
# install-packages.sh PKG... — install the given Debian packages that are not installed yet.
#
# Shared by setup.sh and setup-bench.sh. Checks each package with dpkg-query; when all are
# present it prints one line and exits 0 without touching apt. Otherwise it updates the package
# lists and installs only the missing ones, as root or through sudo; without either it lists the
# packages and exits 1. Always passes a lock timeout: other apt runs may overlap.
set -euo pipefail

missing=()
for pkg in "$@"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "installed" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#} packages are installed"
  exit 0
fi

echo "setup: missing packages: ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "setup: not root and no sudo; install them as root with:" >&2
  echo "  apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

apt=(apt-get -o DPkg::Lock::Timeout=300)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" "${apt[@]}" update
"${sudo[@]}" "${apt[@]}" install -y --no-install-recommends "${missing[@]}"
echo "setup: installed ${missing[*]}"
