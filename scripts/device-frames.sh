#!/bin/bash
# Simulated frames for the GPU tests on the device machine (which has no
# cfitsio to run aurorasim): kinds whose statistics differ from the real
# frames in tests/data/real, at sizes around the coder's edges, written to
# .device/frames (git-ignored; pass carry [".device"] to the run tool).
set -eu
cd "$(dirname "$0")/.."
SIM=${BUILD:-build}/bin/aurorasim
[ -x "$SIM" ] || { echo "device-frames: $SIM is not built (make)" >&2; exit 1; }
mkdir -p .device/frames
rm -f .device/frames/*.fits
for spec in echelle:9:1:1024:1024 echelle-arc:10:1:1024:1024 dark:4:1:1024:1024 twilight:6:1:1024:1024 \
            aurora:1:1:1024:1024 arc:8:1:1024:512 echelle:11:1:300:200 bias:5:1:257:65; do
    IFS=: read -r kind seed level w h <<<"$spec"
    "$SIM" --one ".device/frames/sim_${kind}_s${seed}_${w}x${h}.fits" -q --kind "$kind" --seed "$seed" \
        --level "$level" -W "$w" -H "$h" --start-time 2014-07-15T00:00:00
done
ls .device/frames
