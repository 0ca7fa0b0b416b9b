#!/bin/sh
# Regenerates the golden streams of tests/golden/ (only when the format
# changes on purpose: every old stream must then be reconsidered).
#   tests/golden/generate.sh [BUILD_DIR]
set -e
cd "$(dirname "$0")/../.."
BUILD=${1:-build/golden}
make -s BUILD="$BUILD" "$BUILD/bin/make_golden"
DATA=${AURP_SHARED_DATA:-tests/data/real}
"$BUILD/bin/make_golden" tests/golden "$DATA/trex_20230503T060000_f0.fits"
