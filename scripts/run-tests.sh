#!/bin/bash
# The whole test run (`make test`): installs what is missing, builds the
# normal and the ASan/UBSan trees, runs the unit tests under the sanitizers,
# the integration tests (real processes, real directories) on the normal
# build, short fuzz runs, and the GPU test programs' build check.  Ends with
# one line "tests: N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
passed=0; failed=0; skipped=0
failures=()

note() { printf '\n== %s\n' "$*"; }
record() { # name status(0=pass, 77=skip, else fail)
    if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "PASS $1"
    elif [ "$2" -eq 77 ]; then skipped=$((skipped + 1)); echo "SKIP $1"
    else failed=$((failed + 1)); failures+=("$1"); echo "FAIL $1 (exit $2)"; fi
}

note "dependencies"
scripts/install-deps.sh || { echo "cannot install dependencies"; exit 1; }

note "build (normal)"
make -s -j"$JOBS" all bench-tools || { echo "build failed"; echo "tests: 0 passed, 1 failed"; exit 1; }
note "build (ASan + UBSan)"
make -s -j"$JOBS" BUILD=build/asan SAN=1 all unit-tests || { echo "sanitizer build failed"; echo "tests: 0 passed, 1 failed"; exit 1; }

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# the real frames: ../shared/data where the checkout has it, else the copy in tests/data/real
if [ -z "${AURP_SHARED_DATA:-}" ]; then
    if ls ../shared/data/*.fits >/dev/null 2>&1; then AURP_SHARED_DATA=$(cd ../shared/data && pwd)
    else AURP_SHARED_DATA=$(pwd)/tests/data/real; fi
fi
export AURP_SHARED_DATA
echo "real frames: $AURP_SHARED_DATA"

note "unit tests (ASan + UBSan)"
# Criterion's exit status is not enough: a failed assertion whose test then
# aborts in its teardown (LeakSanitizer on the buffers the assertion left)
# was reported with status 0; its summary line still counts it
unit_log=$(mktemp)
for t in build/asan/tests/test_*; do
    [ -x "$t" ] || continue
    "$t" --jobs 2 --short-filename 2>&1 | tee "$unit_log"; rc=${PIPESTATUS[0]}
    if [ "$rc" -eq 0 ] && grep -qE "(Failing|Crashing): [1-9]" "$unit_log"; then rc=1; fi
    record "unit:$(basename "$t")" "$rc"
done
rm -f "$unit_log"

note "python lint (pyflakes: unused imports, undefined names, dead locals)"
# the C is built with warnings as errors; the Python tests and package get the same care
/usr/bin/python3 -m pyflakes tests python scripts; record "lint:pyflakes" $?

if ls tests/integration/test_*.py >/dev/null 2>&1; then
    note "integration tests"
    AURP_BUILD=$(pwd)/build /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/integration
    rc=$?; [ $rc -eq 5 ] && rc=77
    record "integration" $rc
fi

if [ -d tests/python ]; then
    note "python package (pip install ./python into a venv; numpy, astropy, dask LocalCluster)"
    BUILD=build scripts/test-python.sh; record "python" $?
fi

if ls tests/fuzz/fuzz_*.c >/dev/null 2>&1; then
    note "fuzz (short runs; scripts/fuzz.sh runs them longer)"
    scripts/fuzz.sh 20; record "fuzz" $?
fi

note "GPU"
if [ -n "$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)" ]; then
    make -s -j"$JOBS" gpu-check; rc=$?
    record "gpu:compile" $rc
    if build/bin/aurp-gpu-probe >/dev/null 2>&1; then
        echo "a GPU is present: run make test-gpu for the GPU tests"
    else
        echo "GPU tests skipped: $(build/bin/aurp-gpu-probe 2>&1 | tail -1)"
    fi
    record "gpu:tests (no GPU here; make test-gpu on the device machine)" 77
else
    echo "GPU tests skipped: nvcc not found, CUDA files not compiled"
    record "gpu:compile (nvcc not found)" 77
fi

echo
[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[@]}"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
