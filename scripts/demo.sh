#!/bin/bash
# The daemon on a simulated spectrometer (`make demo`): aurorad with
# config/demo.yaml (directories under build/demo/, the earlier run's files
# removed first) and aurorasim writing realistic 1024 x 1024 frames every
# DEMO_INTERVAL seconds (default 15), each named by the real clock at the
# moment it is written.  Once the first frame is packed, the demo restores
# it with `aurorapack unpack` and compares it with the original.  The
# daemon's log scrolls (readable on a terminal, JSON otherwise); Ctrl-C
# stops both cleanly (the daemon finishes the frames in flight) and prints
# a summary.  DEMO_FRAMES=N stops by itself after N frames (for tests).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
INTERVAL=${DEMO_INTERVAL:-15}
DEMO=${DEMO_DIR:-$PWD/$BUILD/demo}
WIDTH=${DEMO_WIDTH:-1024}
HEIGHT=${DEMO_HEIGHT:-1024}
FRAMES=${DEMO_FRAMES:-0}
for b in aurorad aurorasim aurorapack; do
    [ -x "$BUILD/bin/$b" ] || { echo "demo: $BUILD/bin/$b is not built (run make)" >&2; exit 1; }
done

# an earlier run's frames would be a backlog and its totals would carry on:
# start clean (only the demo's own directories and files)
mkdir -p "$DEMO"
rm -rf "${DEMO:?}"/{incoming,outbox,done,quarantine,state,restored} "$DEMO/aurorad.yaml"
sed "s|/tmp/aurorad-demo|$DEMO|g" config/demo.yaml > "$DEMO/aurorad.yaml"
"$BUILD/bin/aurorad" --check-config "$DEMO/aurorad.yaml" || exit 1
mkdir -p "$DEMO/incoming"

cat <<INFO
== aurorapack demo
   simulator : $BUILD/bin/aurorasim, ${WIDTH}x${HEIGHT} frames every ${INTERVAL} s -> $DEMO/incoming
   daemon    : $BUILD/bin/aurorad -c $DEMO/aurorad.yaml
   outbox    : $DEMO/outbox   (originals kept in $DEMO/done)
   queue     : $BUILD/bin/aurorad --queue -c $DEMO/aurorad.yaml
   metrics   : $DEMO/state/aurorad.prom
   Ctrl-C stops both.  Faster: DEMO_INTERVAL=2 make demo
INFO

# Children started from a script ignore SIGINT; both install their own
# handlers, and the trap below also sends them SIGTERM.
"$BUILD/bin/aurorad" -c "$DEMO/aurorad.yaml" &
AURORAD_PID=$!
sleep 0.3

# One frame at a time, named by the real clock (aurorasim's own cadence
# would name frames 15 s apart whatever DEMO_INTERVAL is).
simulate() {
    local i=0 seed=$RANDOM
    trap 'exit 0' TERM
    while [ "$FRAMES" -eq 0 ] || [ "$i" -lt "$FRAMES" ]; do
        "$BUILD/bin/aurorasim" -W "$WIDTH" -H "$HEIGHT" --count 1 --interval 0 --seed "$seed" \
            --start-index "$i" --start-time "$(date -u +%s)" -q "$DEMO/incoming" || exit 1
        i=$((i + 1))
        { [ "$FRAMES" -eq 0 ] || [ "$i" -lt "$FRAMES" ]; } && sleep "$INTERVAL"
    done
}
simulate &
SIM_PID=$!

# The restore a user at home does: unpack one packed frame, compare it
# with the original byte for byte.
RESTORED=
restore_one() {
    local packed orig
    packed=$(find "$DEMO/outbox" -maxdepth 1 -name '*.aurp' 2>/dev/null | sort | head -1)
    [ -n "$packed" ] || return 0
    mkdir -p "$DEMO/restored"
    echo "== restore: $BUILD/bin/aurorapack unpack -C $DEMO/restored $packed"
    "$BUILD/bin/aurorapack" unpack -C "$DEMO/restored" "$packed" || { RESTORED=failed; return 0; }
    # the outbox name is CAPTURETIME_NAME.aurp; the original is done/NAME
    local restored=$DEMO/restored/$(basename "${packed%.aurp}")
    orig=$DEMO/done/$(basename "$restored" | sed -E 's/^[0-9]{8}T[0-9]{6}\.[0-9]{3}Z_//')
    if cmp "$restored" "$orig"; then
        echo "== restore: $(basename "$restored") is byte for byte the original $orig"
        RESTORED=ok
    else
        echo "== restore: $(basename "$restored") differs from $orig" >&2
        RESTORED=failed
    fi
}

summary() {
    local n in out
    n=$(find "$DEMO/outbox" -maxdepth 1 -name '*.aurp' | wc -l)
    in=$(find "$DEMO/done" -maxdepth 1 -type f -printf '%s\n' 2>/dev/null | awk '{s+=$1} END {print s+0}')
    out=$(find "$DEMO/outbox" -maxdepth 1 -name '*.aurp' -printf '%s\n' | awk '{s+=$1} END {print s+0}')
    echo "== demo: $n frames in $DEMO/outbox; $in bytes in, $out bytes out" \
         "$(awk -v a="$in" -v b="$out" 'BEGIN { if (b > 0) printf "(ratio %.2f)", a / b }')"
    echo "== restore: ${RESTORED:-no frame was packed}"
}

stop() {
    trap '' INT TERM
    echo "== stopping the simulator and the daemon (it finishes the frames in flight)"
    kill -TERM "$SIM_PID" 2>/dev/null
    wait "$SIM_PID" 2>/dev/null
    kill -TERM "$AURORAD_PID" 2>/dev/null
    wait "$AURORAD_PID"
    local rc=$?
    [ -z "$RESTORED" ] && restore_one
    summary
    [ "$RESTORED" = failed ] && rc=1
    exit $rc
}
STOP_ASKED=
trap 'STOP_ASKED=1' INT TERM
# Runs until Ctrl-C (or DEMO_FRAMES packed); the daemon ending on its own is a fault.
while [ -z "$STOP_ASKED" ] && kill -0 "$AURORAD_PID" 2>/dev/null; do
    sleep 1
    [ -z "$RESTORED" ] && restore_one
    if [ "$FRAMES" -gt 0 ] &&
        [ "$(find "$DEMO/outbox" -maxdepth 1 -name '*.aurp' | wc -l)" -ge "$FRAMES" ]; then
        break
    fi
    if ! kill -0 "$SIM_PID" 2>/dev/null && [ "$FRAMES" -eq 0 ]; then
        echo "== demo: the simulator ended unexpectedly" >&2
        break
    fi
done
[ -z "$STOP_ASKED" ] && [ "$FRAMES" -eq 0 ] && echo "== demo: stopped unexpectedly" >&2
stop
