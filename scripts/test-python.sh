#!/bin/bash
# The Python package's tests (make test runs this): installs python/ with
# `pip install ./python` into a fresh virtual environment that sees Debian's
# numpy, astropy and dask (--system-site-packages; no network), then runs
# tests/python with that environment's interpreter, so what is tested is
# the installed package, not the source tree.
#   BUILD=build scripts/test-python.sh [pytest args]
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BUILD_ABS=$(cd "$BUILD" && pwd)
[ -e "$BUILD_ABS/lib/libaurorapack.so.1" ] || make -s BUILD="$BUILD" lib
VENV=$(mktemp -d /tmp/aurorapack-venv.XXXXXX)
trap 'rm -rf "$VENV"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$VENV"
AURORAPACK_LIBDIR="$BUILD_ABS/lib" "$VENV/bin/python" -m pip install -q --no-index ./python
rm -rf python/build python/*.egg-info
cd tests/python  # not the repository root: `import aurorapack` must find the installed one
AURP_BUILD="$BUILD_ABS" "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@" .
