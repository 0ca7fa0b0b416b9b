#!/bin/bash
# A hash of the sources the programs are built from (the C, CUDA and make
# files of every component), the same on the Debian machine and on a device
# machine's copy of the tree: scripts/carry-for-device.sh records it with the
# carried programs, scripts/device-run.sh compares it before testing them.
set -eu
cd "$(dirname "$0")/.."
find Makefile core gpu cli fits frame daemon lib sim third_party -type f \
    \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.mk' -o -name Makefile \) |
    LC_ALL=C sort | xargs cat | sha256sum | cut -d' ' -f1
