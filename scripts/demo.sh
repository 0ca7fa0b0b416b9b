#!/bin/bash
# The daemon on a simulated spectrometer (`make demo`): aurorad with
# config/demo.yaml (directories under build/demo/) and aurorasim writing
# realistic 1024 x 1024 frames every DEMO_INTERVAL seconds (default 15).
# The daemon's JSON log scrolls; Ctrl-C stops both cleanly (the daemon
# finishes the frames in flight) and prints a summary.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
INTERVAL=${DEMO_INTERVAL:-15}
DEMO=${DEMO_DIR:-$PWD/$BUILD/demo}
WIDTH=${DEMO_WIDTH:-1024}
HEIGHT=${DEMO_HEIGHT:-1024}
for b in aurorad aurorasim; do
    [ -x "$BUILD/bin/$b" ] || { echo "demo: $BUILD/bin/$b is not built (run make)" >&2; exit 1; }
done

mkdir -p "$DEMO"
sed "s|/tmp/aurorad-demo|$DEMO|g" config/demo.yaml > "$DEMO/aurorad.yaml"
"$BUILD/bin/aurorad" --check-config "$DEMO/aurorad.yaml" || exit 1
mkdir -p "$DEMO/incoming"

cat <<INFO
== aurorapack demo
   simulator : $BUILD/bin/aurorasim, ${WIDTH}x${HEIGHT} frames every ${INTERVAL} s -> $DEMO/incoming
   daemon    : $BUILD/bin/aurorad -c $DEMO/aurorad.yaml
   outbox    : $DEMO/outbox   (originals kept in $DEMO/done)
   Ctrl-C stops both.  Faster: DEMO_INTERVAL=2 make demo
INFO

# Children started from a script ignore SIGINT; both install their own
# handlers, and the trap below also sends them SIGTERM.
"$BUILD/bin/aurorad" -c "$DEMO/aurorad.yaml" &
AURORAD_PID=$!
sleep 0.3
"$BUILD/bin/aurorasim" -W "$WIDTH" -H "$HEIGHT" --interval "$INTERVAL" --seed "$RANDOM" -q \
    "$DEMO/incoming" &
SIM_PID=$!

summary() {
    local n in out
    n=$(find "$DEMO/outbox" -maxdepth 1 -name '*.aurp' | wc -l)
    in=$(find "$DEMO/done" -maxdepth 1 -type f -printf '%s\n' 2>/dev/null | awk '{s+=$1} END {print s+0}')
    out=$(find "$DEMO/outbox" -maxdepth 1 -name '*.aurp' -printf '%s\n' | awk '{s+=$1} END {print s+0}')
    echo "== demo: $n frames in $DEMO/outbox; $in bytes in, $out bytes out" \
         "$(awk -v a="$in" -v b="$out" 'BEGIN { if (b > 0) printf "(ratio %.2f)", a / b }')"
}

stop() {
    trap '' INT TERM
    echo "== stopping the simulator and the daemon (it finishes the frames in flight)"
    kill -TERM "$SIM_PID" 2>/dev/null
    wait "$SIM_PID" 2>/dev/null
    kill -TERM "$AURORAD_PID" 2>/dev/null
    wait "$AURORAD_PID"
    local rc=$?
    summary
    exit $rc
}
STOP_ASKED=
trap 'STOP_ASKED=1' INT TERM
# Runs until Ctrl-C; either process ending on its own is a fault.
while [ -z "$STOP_ASKED" ] && kill -0 "$AURORAD_PID" 2>/dev/null && kill -0 "$SIM_PID" 2>/dev/null; do
    wait -n "$AURORAD_PID" "$SIM_PID" 2>/dev/null
done
[ -z "$STOP_ASKED" ] && echo "== demo: a process ended unexpectedly" >&2
stop
