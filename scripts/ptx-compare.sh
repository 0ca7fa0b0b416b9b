#!/bin/bash
# ptx-compare.sh REV: is the GPU code of the working tree the code of REV?
# Compiles every gpu/*.cu of both to PTX (nvcc, the build's flags) and
# compares them, ignoring the hashes nvcc derives from the source path.
# Where every file is the same, the kernels REV was tested with on a
# device are the kernels here: a host-side change (core/ headers the
# kernels include, for example) that leaves them the same needs no device
# run to keep the GPU's bytes.  "same (up to register numbers)": the same
# instructions with the virtual registers named in another order.  Needs
# nvcc and python3, not a GPU.  Exit 0: all the same; 1: some differ
# (listed); 2: no nvcc or no such revision.
set -euo pipefail
REV=${1:?usage: scripts/ptx-compare.sh REV}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "ptx-compare: no nvcc" >&2; exit 2; }
command -v python3 >/dev/null || { echo "ptx-compare: no python3" >&2; exit 2; }
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
trap 'git worktree remove --force "$WORK/old" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
git worktree add -q --detach "$WORK/old" "$REV" || exit 2
ptx() { # tree out
    mkdir -p "$2"
    for f in "$1"/gpu/*.cu; do
        (cd "$1" && "$NVCC" -O3 -std=c++17 --fmad=false -arch=compute_90 -ptx -Icore -Igpu \
            "gpu/$(basename "$f")" -o "$2/$(basename "$f" .cu).ptx")
        sed -i -E 's/_INTERNAL_[0-9a-f]{8}_/_INTERNAL_/g; s/_GLOBAL__N__[0-9a-f]{8}_/_GLOBAL__N__/g' \
            "$2/$(basename "$f" .cu).ptx"
    done
}
ptx "$WORK/old" "$WORK/ptx-old"
ptx "$PWD" "$WORK/ptx-new"
# The PTX with its virtual registers renumbered in order of first use: a
# refactoring (a helper function, a variable moved) can renumber them and
# leave every instruction the same.
renumbered() { # (registers are a function's own: numbered anew in each)
    python3 -c 'import re, signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # cmp stops reading at the first difference
seen = {}
def name(m):
    return seen.setdefault(m.group(0), "%" + m.group(1) + str(len(seen)))
for line in open(sys.argv[1]):
    if re.match(r"\s*(\.visible\s+|\.weak\s+)?\.(entry|func)\b", line):
        seen.clear()
    sys.stdout.write(re.sub(r"%(rd|rs|r|p|fd|f)[0-9]+\b", name, line))' "$1"
}
status=0
for f in "$WORK"/ptx-new/*.ptx; do
    b=$(basename "$f")
    if [ ! -f "$WORK/ptx-old/$b" ]; then echo "new   $b"; status=1
    elif cmp -s "$f" "$WORK/ptx-old/$b"; then echo "same  $b"
    elif cmp -s <(renumbered "$f") <(renumbered "$WORK/ptx-old/$b"); then echo "same  $b (up to register numbers)"
    else echo "DIFF  $b"; status=1; fi
done
for f in "$WORK"/ptx-old/*.ptx; do [ -f "$WORK/ptx-new/$(basename "$f")" ] || { echo "gone  $(basename "$f")"; status=1; }; done
exit $status
