#!/bin/bash
# aurorad on the device machine: the real daemon, real directories, the
# simulator writing 1024 x 1024 frames, with 1, 2, ... GPUs in column-split
# and frame-parallel mode.  Prints per-frame latency (median, p90, max) from
# the daemon's own JSON log lines, and for the burst the backlog drain rate
# next to the encoders' rate and the all-core verify pool's rate (issue #10
# item 4: the drain should reach at least 80 % of the slower of the two).  Binaries and the shared libraries they
# need (libuv, cfitsio, libyaml, libsystemd: not installed on those machines)
# come in the carried folder .carry/ (scripts/carry-for-device.sh makes it).
#   scripts/device-daemon.sh [FRAMES] [INTERVAL_SECONDS]
# DAEMON_PROFILE: the codec profile (default lsmix, the station's default;
# paper for the paper profile); DAEMON_CASES="GPUS:SPLIT ...".
set -u
cd "$(dirname "$0")/.."
CARRY=${CARRY:-.carry}
export LD_LIBRARY_PATH=$PWD/$CARRY/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
BIN=$PWD/$CARRY/bin
OUTDIR=${OUT:-/tmp/aurorad-device}
mkdir -p "$OUTDIR"
FRAMES=${1:-30}
INTERVAL=${2:-0.5}
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
echo "device-daemon: $NGPU GPU(s), $FRAMES frames at ${INTERVAL}s, then a burst of $FRAMES"

run_case() { # gpus split
    local g=$1 split=$2 name="g$1-$2" root=/tmp/ad-$1-$2
    rm -rf "$root"; mkdir -p "$root"/{incoming,outbox,done,quarantine,state}
    cat > "$root/aurorad.yaml" <<YAML
incoming_dir: $root/incoming
outbox_dir: $root/outbox
done_dir: $root/done
quarantine_dir: $root/quarantine
state_dir: $root/state
codec: {profile: ${DAEMON_PROFILE:-lsmix}}
gpus: $g
split: $split
budget_seconds: 15
verify: true
settle_ms: 100
rescan_seconds: 2
log_prefix: false
${DAEMON_EXTRA_YAML:-}
YAML
    # DAEMON_ENV: extra environment for aurorad (the gpufault step's injection)
    env ${DAEMON_ENV:-} "$BIN/aurorad" -c "$root/aurorad.yaml" 2> "$OUTDIR/$name.log" &
    local pid=$!
    sleep 2
    # steady stream (latency), then a burst written at once (throughput)
    # capture times (the file names) a day apart, so that the two runs can
    # never name two different frames alike (the daemon would quarantine the
    # second: the outbox already holds a different file of that name)
    local t0=$(date +%s)
    "$BIN/aurorasim" -q --count "$FRAMES" --interval "$INTERVAL" --seed 7 --start-time "$t0" "$root/incoming"
    # the burst is written to a staging directory first and moved in at
    # once, so that its drain rate is the daemon's, not the simulator's
    mkdir -p "$root/staging"
    "$BIN/aurorasim" -q --count "$FRAMES" --interval 0 --seed 8 --start-index 1000 \
        --start-time $((t0 + 86400)) "$root/staging"
    mv "$root"/staging/* "$root/incoming/"
    local want=$((2 * FRAMES)) t=0 limit=$((2 * ${DAEMON_WAIT:-90}))
    while [ "$(ls "$root/outbox" | grep -c '\.aurp$')" -lt "$want" ] && [ $t -lt $limit ] &&
        kill -0 $pid 2>/dev/null; do
        sleep 0.5; t=$((t + 1))
    done
    echo "$name: outbox $(ls "$root/outbox" | grep -c '\.aurp$')/$want, quarantine $(ls "$root/quarantine" | wc -l), incoming $(ls "$root/incoming" | wc -l)"
    kill -TERM $pid 2>/dev/null; wait $pid; echo "aurorad exit $?"
    # anything that was not a plain frame line: warnings, errors, fallbacks
    grep -v '"event":"frame"' "$OUTDIR/$name.log" | grep -v '"level":"info"' | tail -8
    python3 - "$OUTDIR/$name.log" "$name" "$FRAMES" <<'PY'
import json, sys, statistics as st
path, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
import re
from datetime import datetime
frames, started = [], {}
for line in open(path):
    line = line.strip()
    if line.startswith('<'): line = line[line.index('>') + 1:]
    try: j = json.loads(line)
    except ValueError: continue
    if j.get('event') == 'frame': frames.append(j)
    if j.get('event') == 'started': started = j
def secs(f): # wall time of the log line
    return datetime.strptime(f['ts'], '%Y-%m-%dT%H:%M:%S.%fZ').timestamp()
def rates(fs):
    # encoders: each device label's workers at its mean encode time ("cpu xN" from
    # the started line); verify: every verify thread at the mean verify time; drain:
    # the burst's frames over the time from the first one complete to the last commit
    cpu_n = int((re.search(r'cpu x(\d+)', started.get('devices', '')) or [0, 1])[1])
    enc = 0.0
    for dev in {f['device'] for f in fs}:
        ms = st.mean(f['encode_ms'] for f in fs if f['device'] == dev) or 1e-3
        enc += (cpu_n if dev == 'cpu' else 1) * 1000 / ms
    vms = st.mean(f['verify_ms'] for f in fs) or 1e-3
    ver = started.get('verify_workers', 1) * 1000 / vms
    t0 = min(secs(f) - f['latency_ms'] / 1e3 for f in fs)
    drain = len(fs) / max(1e-3, max(secs(f) for f in fs) - t0)
    slower = min(enc, ver)
    print(f"{name:14s} burst   drain {drain:7.1f} frames/s  encode {enc:7.1f} frames/s ({started.get('workers')} encoders)"
          f"  verify {ver:7.1f} frames/s ({started.get('verify_workers')} verify threads)"
          f"  drain/slower {100 * drain / slower:5.1f} % (target >= 80 %)")
def row(label, fs):
    if not fs: print(f"{name:14s} {label:7s} no frames"); return
    lat = sorted(f['latency_ms'] for f in fs); enc = sorted(f.get('encode_ms', 0) for f in fs)
    q = lambda a, p: a[min(len(a) - 1, int(p * len(a)))]
    devs = sorted({str(f.get('device')) for f in fs})
    print(f"{name:14s} {label:7s} frames {len(fs):3d}  latency ms median {st.median(lat):8.1f} p90 {q(lat,.9):8.1f} max {lat[-1]:8.1f}"
          f"  encode ms median {st.median(enc):7.1f}  bpp {st.mean(f['bpp'] for f in fs):.3f}  devices {','.join(devs)}")
row('steady', frames[:n]); row('burst', frames[n:])
if frames[n:]: rates(frames[n:])
PY
}

# DAEMON_CASES="0:frames 2:frames ..." runs only those
CASES=${DAEMON_CASES:-}
if [ -z "$CASES" ]; then
    CASES="0:frames"
    for g in 1 2 4; do
        [ "$g" -le "$NGPU" ] || continue
        CASES="$CASES $g:columns"
        [ "$g" -gt 1 ] && CASES="$CASES $g:frames"
    done
fi
for c in $CASES; do run_case "${c%%:*}" "${c#*:}"; done
tar -C "$OUTDIR" -czf "$OUTDIR/../daemon-logs.tgz" . 2>/dev/null
exit 0
