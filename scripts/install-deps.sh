#!/bin/sh
# Installs the Debian packages aurorapack needs to build, test and demo.
# Idempotent: does nothing when they are all present.  Needs root (or sudo).
set -e
PKGS="build-essential clang libclang-rt-14-dev libuv1-dev libcfitsio-dev libcfitsio-bin \
libyaml-dev libsystemd-dev libcriterion-dev libcharls-dev libjxl-tools \
python3 python3-pytest python3-pyflakes jq bzip2 xz-utils time rsync prometheus-node-exporter libxxhash0 \
pkg-config python3-venv python3-setuptools python3-numpy python3-astropy python3-dask python3-distributed"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
