#!/bin/bash
# Builds every tests/fuzz/fuzz_*.c as a libFuzzer target (clang,
# -fsanitize=fuzzer,address,undefined) and runs each for SECONDS with a seed
# corpus from tests/golden/.  Exits non-zero if any target crashes or fails
# to build.  Each target links the core sources, and fits/ and frame/ (with
# cfitsio) where those folders exist.
#   scripts/fuzz.sh [SECONDS]      (default 60)
set -u
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
OUT=${FUZZ_BUILD:-build/fuzz}
CC_FUZZ=${CC_FUZZ:-clang}
mkdir -p "$OUT"

SRCS=(core/*.c)
LIBS=(-lm -lpthread)
for d in fits frame; do
    if ls "$d"/*.c >/dev/null 2>&1; then SRCS+=("$d"/*.c); NEED_CFITSIO=1; fi
done
[ -n "${NEED_CFITSIO:-}" ] && LIBS+=(-lcfitsio)
CFLAGS=(-std=c11 -O1 -g -ffp-contract=off -fno-fast-math -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
        -Icore -Ithird_party/xxhash -Isim -Ifits -Iframe)

status=0
for target in tests/fuzz/fuzz_*.c; do
    [ -e "$target" ] || continue
    name=$(basename "$target" .c)
    echo "fuzz: building $name"
    if ! "$CC_FUZZ" "${CFLAGS[@]}" "$target" "${SRCS[@]}" -o "$OUT/$name" "${LIBS[@]}"; then
        echo "fuzz: $name: build failed"; status=1; continue
    fi
    corpus="$OUT/$name.corpus"
    mkdir -p "$corpus"
    cp tests/golden/*.aurp "$corpus"/ 2>/dev/null
    case "$name" in *fits*) cp tests/golden/*.orig "$corpus"/ 2>/dev/null;; esac
    echo "fuzz: running $name for ${SECONDS_EACH}s"
    if ! (cd "$OUT" && ASAN_OPTIONS=detect_leaks=1 ./"$name" -max_total_time="$SECONDS_EACH" \
            -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 "$name.corpus" >"$name.log" 2>&1); then
        echo "fuzz: $name FAILED (log: $OUT/$name.log; crash inputs in $OUT)"
        tail -40 "$OUT/$name.log"
        status=1
    else
        grep -E "stat::number_of_executed_units|cov:" "$OUT/$name.log" | tail -2
    fi
done
exit $status
