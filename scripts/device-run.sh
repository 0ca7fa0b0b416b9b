#!/bin/bash
# Everything the GPU encoder needs on the device machine, in one call:
# build, GPU tests (byte-identical to the CPU encoder), compute-sanitizer
# memcheck + racecheck on small frames, and the benchmark.  Logs go to $OUT.
#   run tool:  scripts/device-run.sh [test|sanitize|memcheck|racecheck|racecheck-small|racecheck-wide|bench|cli|daemon|gpufault|profile|racediag ...]   (carry .carry)
# Default: test sanitize bench cli daemon.  sanitize = memcheck racecheck.
# The racecheck of the small frames took about 7 minutes, and more than a
# call's 10 since the cascade's wide support made its kernels heavier:
# split it over calls by frame name (AURP_GPU_TEST_ONLY=spectrum-1 ...);
# racecheck-wide (about 7 minutes, a call of its own) checks the one test
# frame that takes the wide support, racecheck-small (about 2) one small
# frame whose LS kernel has interior blocks.  The steps' verdicts are printed
# again at the end, where a remote run's last lines show them.
# Frames: tests/data/real/*.fits (the real frames; they travel with the tree).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/aurp-device-out}
mkdir -p "$OUT"
DATA=${AURP_SHARED_DATA:-tests/data/real}
# simulated frames of other kinds (echelle orders, dark, twilight...), made
# on the Debian machine by scripts/device-frames.sh and carried in .device
SIMF=$(ls .device/frames/*.fits 2>/dev/null | tr '\n' ' ')
B=build/device
steps=${*:-test sanitize bench cli daemon}
steps=${steps//sanitize/memcheck racecheck}
status=0
: >"$OUT/verdicts.txt"
verdict() { echo "$*" | tee -a "$OUT/verdicts.txt"; }
# the cascade fit's kernel (one block, shared memory and barriers) under a
# compute-sanitizer tool, on the quick set of systems
sanitize_cas_cg() {
    AURP_GPU_TEST_QUICK=1 compute-sanitizer --tool "$1" --error-exitcode 9 $B/tests/gpu/test_gpu_cas_cg \
        >"$OUT/sanitize-cas-cg-$1.log" 2>&1; rc=$?
    verdict "$1 (cascade fit): $(grep passed "$OUT/sanitize-cas-cg-$1.log" | tail -1);" \
        "$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize-cas-cg-$1.log" | tail -1) rc=$rc"
    [ $rc -ne 0 ] && status=1
}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpus.txt"
make -s BUILD=$B -j"$(nproc)" gpu-check >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
$B/bin/aurp-gpu-probe || exit 1
for s in $steps; do
    case $s in
    test)
        echo "== the device DP against the C core's: $B/tests/gpu/test_gpu_dp"
        $B/tests/gpu/test_gpu_dp >"$OUT/test-dp.log" 2>&1; rc=$?
        grep -E "^FAIL|^trial" "$OUT/test-dp.log" | tail -8
        verdict "test-dp: $(grep passed "$OUT/test-dp.log" | tail -1) rc=$rc"
        [ $rc -ne 0 ] && status=1
        echo "== the device's division and reciprocal against C's: $B/tests/gpu/test_gpu_arith"
        $B/tests/gpu/test_gpu_arith >"$OUT/test-arith.log" 2>&1; rc=$?
        grep -E "^FAIL" "$OUT/test-arith.log" | tail -4
        verdict "test-arith: $(grep passed "$OUT/test-arith.log" | tail -1) rc=$rc"
        [ $rc -ne 0 ] && status=1
        echo "== the device's cascade fit against C's: $B/tests/gpu/test_gpu_cas_cg"
        $B/tests/gpu/test_gpu_cas_cg >"$OUT/test-cas-cg.log" 2>&1; rc=$?
        grep -E "^FAIL" "$OUT/test-cas-cg.log" | tail -8
        verdict "test-cas-cg: $(grep passed "$OUT/test-cas-cg.log" | tail -1) rc=$rc"
        [ $rc -ne 0 ] && status=1
        echo "== make test-gpu equivalent: $B/tests/gpu/test_gpu_encode $DATA/*.fits $SIMF"
        $B/tests/gpu/test_gpu_encode "$DATA"/*.fits $SIMF >"$OUT/test.log" 2>&1; rc=$?
        grep -E "^FAIL" "$OUT/test.log" | tail -15
        verdict "test (GPU bytes = CPU bytes): $(grep passed "$OUT/test.log" | tail -1) rc=$rc"
        [ $rc -ne 0 ] && status=1 ;;
    racecheck-small)
        # one small frame with interior LS blocks (37 x 100, 104 cases,
        # about 2 minutes): the racecheck of a kernel change that fits in
        # a call beside the other steps
        echo "== compute-sanitizer --tool racecheck (37 x 100)"
        AURP_GPU_TEST_ONLY=37x100 AURP_GPU_TEST_QUICK=1 AURP_GPU_TEST_DEVICES=1 compute-sanitizer --tool racecheck \
            --error-exitcode 9 $B/tests/gpu/test_gpu_encode >"$OUT/sanitize-racecheck-small.log" 2>&1; rc=$?
        verdict "racecheck (37 x 100): $(grep passed "$OUT/sanitize-racecheck-small.log" | tail -1);" \
            "$(grep -E "RACECHECK SUMMARY" "$OUT/sanitize-racecheck-small.log" | tail -1) rc=$rc"
        [ $rc -ne 0 ] && status=1
        sanitize_cas_cg racecheck ;;
    racecheck-wide)
        # the one simulated test frame whose cascade takes the wide support
        # (FORMAT.md 3.2), which the small frames of `racecheck` never do:
        # the final kernel's wide path, the correlations over 48 kB of
        # shared memory (about 7 minutes)
        echo "== compute-sanitizer --tool racecheck (2085 x 50: the cascade's wide support)"
        AURP_GPU_TEST_ONLY=2085x50 AURP_GPU_TEST_DEVICES=1 compute-sanitizer --tool racecheck --error-exitcode 9 \
            $B/tests/gpu/test_gpu_encode >"$OUT/sanitize-racecheck-wide.log" 2>&1; rc=$?
        verdict "racecheck (wide support): $(grep passed "$OUT/sanitize-racecheck-wide.log" | tail -1);" \
            "$(grep -E "RACECHECK SUMMARY" "$OUT/sanitize-racecheck-wide.log" | tail -1) rc=$rc"
        [ $rc -ne 0 ] && status=1 ;;
    memcheck | racecheck)
        tool=$s
        echo "== compute-sanitizer --tool $tool (small frames)"
        AURP_GPU_TEST_QUICK=1 AURP_GPU_TEST_DEVICES=1 compute-sanitizer --tool $tool --error-exitcode 9 \
            $B/tests/gpu/test_gpu_encode >"$OUT/sanitize-$tool.log" 2>&1; rc=$?
        verdict "$tool: $(grep passed "$OUT/sanitize-$tool.log" | tail -1);" \
            "$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize-$tool.log" | tail -1) rc=$rc"
        [ $rc -ne 0 ] && status=1
        AURP_GPU_TEST_QUICK=1 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/gpu/test_gpu_dp \
            >"$OUT/sanitize-dp-$tool.log" 2>&1; rc=$?
        verdict "$tool (DP): $(grep passed "$OUT/sanitize-dp-$tool.log" | tail -1);" \
            "$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize-dp-$tool.log" | tail -1) rc=$rc"
        [ $rc -ne 0 ] && status=1
        sanitize_cas_cg $tool
        ;;
    bench)
        echo "== benchmark (simulated 1024x1024 spectrum): lsmix, then paper"
        $B/tests/gpu/aurp-gpu-bench -p lsmix -n 100 -j 2,4,8,16 2>&1 | tee "$OUT/bench-lsmix.log"
        verdict "bench lsmix: GPUs median_ms p90_ms min_ms split_fps frames_fps: $(grep -E "^1 " "$OUT/bench-lsmix.log" | head -1);" \
            "8 handles: $(grep "8 handles" "$OUT/bench-lsmix.log" | awk '{print $(NF-1)}') frames/s"
        for f in $SIMF; do
            case $f in *1024x1024*) $B/tests/gpu/aurp-gpu-bench -p lsmix -g 1 -n 50 "$f" 2>&1 |
                grep -E "^frame|^1 " | tee -a "$OUT/bench-lsmix-sim.log" ;; esac
        done
        $B/tests/gpu/aurp-gpu-bench -n 200 -j 2,4,8 2>&1 | tee "$OUT/bench.log"
        f=$(ls "$DATA"/trex*f0*.fits 2>/dev/null | head -1)
        [ -n "$f" ] && $B/tests/gpu/aurp-gpu-bench -n 200 "$f" >"$OUT/bench-trex.log" 2>&1 ;;
    cli)
        # the carried aurorapack (built on the Debian machine, static cudart):
        # --gpu streams are the CPU's bytes, unpack restores the file, bench
        echo "== aurorapack pack --gpu vs --cpu on every frame"
        if [ "$(cat .carry/SOURCE 2>/dev/null)" != "$(scripts/source-stamp.sh)" ]; then
            echo "cli: .carry was not built from this tree's sources (run scripts/carry-for-device.sh): FAILED"
            status=1
            continue
        fi
        export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        AP=.carry/bin/aurorapack; W=$(mktemp -d)
        .carry/bin/aurorasim --one "$W/sim1024.fits" >/dev/null
        ngpu=$(nvidia-smi -L | wc -l); list=$(seq -s, 0 $((ngpu - 1)))
        for f in "$W/sim1024.fits" "$DATA"/*.fits $SIMF; do
            b=$(basename "$f")
            for prof in lsmix paper; do
                $AP pack -q --profile $prof --cpu -o "$W/$b.cpu" "$f" &&
                    $AP pack -q --profile $prof --gpu "$list" -o "$W/$b.gpu" "$f" &&
                    cmp "$W/$b.cpu" "$W/$b.gpu" && $AP unpack -q -f -o "$W/$b.back" "$W/$b.gpu" &&
                    cmp "$f" "$W/$b.back" && echo "cli $b $prof: --gpu $list identical to --cpu, unpacks identically" ||
                    { verdict "cli $b $prof: FAILED"; status=1; }
                rm -f "$W/$b.cpu" "$W/$b.gpu" "$W/$b.back"
            done
        done
        verdict "cli: $(ls "$DATA"/*.fits $SIMF | wc -l) frames + a simulated one x 2 profiles checked (failures named above)"
        $AP bench --gpu "$list" "$W/sim1024.fits" 2>&1 | tee "$OUT/cli-bench-lsmix.log" | head -5
        $AP bench --profile paper --gpu "$list" "$W/sim1024.fits" 2>&1 | tee "$OUT/cli-bench.log" | head -5
        rm -rf "$W" ;;
    daemon)
        # aurorad itself with 0 (CPU), 1, 2, ... GPUs, both split modes
        echo "== aurorad on this machine (scripts/device-daemon.sh ${DAEMON_FRAMES:-30} ${DAEMON_INTERVAL:-0.5})"
        rm -rf /tmp/aurp-daemon
        OUT=/tmp/aurp-daemon/logs scripts/device-daemon.sh "${DAEMON_FRAMES:-30}" "${DAEMON_INTERVAL:-0.5}" || status=1
        cp /tmp/aurp-daemon/daemon-logs.tgz "$OUT/" ;;
    gpufault)
        # the daemon's GPU-failure path on a real device: encoder calls 3 and 4
        # fail (AURP_GPU_INJECT_FAULTS); those frames must be packed on the CPU,
        # the device taken out of service, restored after its retry, and every
        # frame must reach the outbox
        echo "== aurorad with injected GPU faults (calls 3 and 4)"
        rm -rf /tmp/aurp-fault
        DAEMON_CASES="1:frames" DAEMON_ENV="AURP_GPU_INJECT_FAULTS=3:2" DAEMON_EXTRA_YAML="gpu_retry_seconds: 1" \
            OUT=/tmp/aurp-fault/logs scripts/device-daemon.sh 12 0.5
        python3 - /tmp/aurp-fault/logs/g1-frames.log <<'PY' || status=1
import json, sys
ev = []
for line in open(sys.argv[1]):
    try: ev.append(json.loads(line[line.index('{'):]))
    except ValueError: pass
kinds = [e["event"] for e in ev]
frames = [e for e in ev if e["event"] == "frame"]
on_cpu = [e["file"] for e in frames if e["device"] == "cpu"]
print(f"gpufault: gpu_failed {kinds.count('gpu_failed')}, gpu_restored {kinds.count('gpu_restored')}, "
      f"frames {len(frames)} ({len(on_cpu)} on the cpu), quarantined {kinds.count('quarantined')}")
for e in ev:
    if e["event"] in ("gpu_failed", "gpu_restored"): print("  ", json.dumps(e))
ok = (kinds.count("gpu_failed") >= 1 and kinds.count("gpu_restored") >= 1 and len(frames) == 24
      and len(on_cpu) >= 1 and kinds.count("quarantined") == 0)
print("gpufault:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
        ;;
    profile)
        # ncu on one warm lsmix frame (the bench's third): every kernel's
        # duration, then NCU_KERNEL (default the LS kernel) in detail
        echo "== ncu: kernels of one lsmix frame"
        ncu --launch-count 600 --csv --page raw --metrics gpu__time_duration.sum \
            $B/tests/gpu/aurp-gpu-bench -p lsmix -n 3 -j 1 >"$OUT/ncu-kernels.csv" 2>"$OUT/ncu.err"
        python3 - "$OUT/ncu-kernels.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
h = rows[0]; k = h.index("Kernel Name"); t = h.index("gpu__time_duration.sum")
seq = [(r[k].split("(")[0].split("<")[0].replace("void ", ""), float(r[t].replace(",", ""))) for r in rows[2:]]
# frames start at the frame's first kernel; print the third frame (warm)
starts = [i for i, (n, _) in enumerate(seq) if n == seq[0][0]]
a, b = (starts[2], starts[3]) if len(starts) > 3 else (starts[-2], starts[-1]) if len(starts) > 1 else (0, len(seq))
tot = {}
for n, v in seq[a:b]: tot[n] = tot.get(n, 0.0) + v
print(f"   {len(starts)} frames seen; frame kernels {b - a}, sum {sum(tot.values()) / 1e3:.3f} us")
for n, v in sorted(tot.items(), key=lambda x: -x[1]): print(f"   {v / 1e3:9.3f} us  {n}")
PY
        echo "== ncu: ${NCU_KERNEL:-ls_kernel} in detail"
        ncu --kernel-name "regex:${NCU_KERNEL:-ls_kernel}" --launch-skip 2 --launch-count 1 --set full \
            --import-source yes -o "$OUT/detail" $B/tests/gpu/aurp-gpu-bench -p lsmix -n 3 -j 1 >/dev/null 2>>"$OUT/ncu.err"
        ncu --import "$OUT/detail.ncu-rep" --page details >"$OUT/detail.txt" 2>&1
        ncu --import "$OUT/detail.ncu-rep" --page source --print-source sass --csv >"$OUT/detail-sass.csv" 2>&1
        grep -E "Duration|Registers|Achieved Occupancy|Eligible|Issued Warp|No Eligible|Compute \(SM\) Throughput|Memory Throughput" \
            "$OUT/detail.txt" | head -20 ;;
    racediag)
        # one traced racecheck run over the frames named by AURP_GPU_TEST_ONLY
        AURP_GPU_TEST_TRACE=1 AURP_GPU_TEST_QUICK=1 AURP_GPU_TEST_DEVICES=1 compute-sanitizer --tool racecheck \
            $B/tests/gpu/test_gpu_encode >"$OUT/racediag.log" 2>&1; echo "racediag rc=$?"
        tail -30 "$OUT/racediag.log" ;;
    esac
done
echo "== verdicts (status $status)"
cat "$OUT/verdicts.txt"
exit $status
