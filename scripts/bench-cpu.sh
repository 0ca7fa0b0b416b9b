#!/bin/bash
# CPU benchmarks of issue #2 (`make bench`), on the frames in ../shared/data
# and a simulated 1024 x 1024 frame, all in one run on this machine:
#   1. bench_core: codec core against CharLS (JPEG-LS) on the same pixels,
#      and the packed size against the ideal static code length;
#   2. aurorapack bench: the whole tool against CharLS, cjxl, fpack, bzip2, xz;
#   3. peak resident memory of `aurorapack pack` and `unpack` (GNU time);
#   4. issue #8's size table (the whole packed file against JPEG-LS, cjxl -e 7
#      and -e 9, fpack on real and simulated frames of several kinds) and its
#      speed table (scripts/bench-size.sh; its environment variables apply).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DATA=${AURP_SHARED_DATA:-../shared/data}
[ -d "$DATA" ] || DATA=tests/data/real
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$BUILD/bin/aurorasim" --one "$WORK/sim1024.fits" >/dev/null
frames=("$WORK/sim1024.fits")
for f in "$DATA"/*.fits; do [ -e "$f" ] && frames+=("$f"); done
# issue #8 item 5: the paper profile against its ideal on small frames of the
# held-out shapes (254 x 1024 long-slit, 350 x 2112 bias), simulated here
small=("$WORK/longslit_254x1024.fits" "$WORK/bias_350x2112.fits")
"$BUILD/bin/aurorasim" --one "${small[0]}" -q --kind aurora --seed 3 -W 254 -H 1024 --start-time 2014-07-15T00:00:00
"$BUILD/bin/aurorasim" --one "${small[1]}" -q --kind bias --seed 4 -W 350 -H 2112 --start-time 2014-07-15T00:00:00

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "== 1. codec core vs CharLS, size vs ideal (best of 5)"
"$BUILD/tests/bench/bench_core" -r 5 "${frames[@]}" "${small[@]}"
echo
echo "== 2. aurorapack bench"
"$BUILD/bin/aurorapack" bench "${frames[@]}"
echo
echo "== 3. peak memory (maximum resident set size)"
for f in "${frames[@]}"; do
    cp "$f" "$WORK/in.fits"
    pk=$( { /usr/bin/time -f '%M' "$BUILD/bin/aurorapack" pack -f -o "$WORK/in.aurp" "$WORK/in.fits" >/dev/null; } 2>&1 | tail -1)
    up=$( { /usr/bin/time -f '%M' "$BUILD/bin/aurorapack" unpack -f -o "$WORK/out.fits" "$WORK/in.aurp" >/dev/null; } 2>&1 | tail -1)
    cmp -s "$WORK/in.fits" "$WORK/out.fits" || { echo "$f: round trip differs"; exit 1; }
    printf '%-44s pack %6.1f MiB   unpack %6.1f MiB   (target <= 64 MiB)\n' "$(basename "$f")" \
        "$(awk "BEGIN{print $pk/1024}")" "$(awk "BEGIN{print $up/1024}")"
done
echo
echo "== 4. size and speed against the peers of issue #8"
BUILD=$BUILD scripts/bench-size.sh
