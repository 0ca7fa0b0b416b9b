#!/bin/bash
# usage: run.sh TAG  (env R40_SIGN R40_SV R40_RAW R40_HALVE passed through)
# packs the 26 frames with /tmp/r40's aurorapack, unpacks, cmp; writes TAG.sizes
A=${A:-/tmp/r40/build/bin/aurorapack}
tag=$1; out=/tmp/r40runs/$tag; mkdir -p $out
one() { f=$1; b=$(basename $f .fits)
  $A pack -q -f -o $out/$b.aurp $f || { echo "$b PACKFAIL"; return; }
  $A unpack -q -f -o $out/$b.fits $out/$b.aurp && cmp -s $out/$b.fits $f && ok=ok || ok=DIFF
  echo "$b $(stat -c %s $out/$b.aurp) $ok"; rm -f $out/$b.fits; }
export -f one; export A out
ls /tmp/r40f/*.fits | xargs -P2 -I{} bash -c 'one {}' | sort > /tmp/r40runs/$tag.sizes
