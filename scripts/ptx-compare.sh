#!/bin/bash
# ptx-compare.sh REV: is the GPU code of the working tree the code of REV?
# Compiles every gpu/*.cu of both to PTX (nvcc, the build's flags) and
# compares them, ignoring the hashes nvcc derives from the source path.
# Where every file is the same, the kernels REV was tested with on a
# device are the kernels here: a host-side change (core/ headers the
# kernels include, for example) that leaves them the same needs no device
# run to keep the GPU's bytes.  Needs nvcc, not a GPU.  Exit 0: all the
# same; 1: some differ (listed); 2: no nvcc or no such revision.
set -euo pipefail
REV=${1:?usage: scripts/ptx-compare.sh REV}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "ptx-compare: no nvcc" >&2; exit 2; }
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
status=0
for f in "$WORK"/ptx-new/*.ptx; do
    b=$(basename "$f")
    if [ ! -f "$WORK/ptx-old/$b" ]; then echo "new   $b"; status=1
    elif cmp -s "$f" "$WORK/ptx-old/$b"; then echo "same  $b"
    else echo "DIFF  $b"; status=1; fi
done
for f in "$WORK"/ptx-old/*.ptx; do [ -f "$WORK/ptx-new/$(basename "$f")" ] || { echo "gone  $(basename "$f")"; status=1; }; done
exit $status
