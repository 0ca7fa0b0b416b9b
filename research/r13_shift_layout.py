#!/usr/bin/env python3
"""The layout of the default order's training sums (core/lsmix_predict.c,
LSX13_SLOT, LSX13_HEAD, LSX13_DEP and add_outer_product_13's shuffles).

A column's sums are the 91 products z_r z_s (r <= s) of its 13 regressors
and target, summed over its window and run through the forgetting
recurrence.  The lags x[i][q-1-a], the row above x[i-1][q+b] and the
constant are one zero-padded signal seen at shifted columns: where both
windows lie inside the image, the product of two of them in column n is
the product of the same pair moved one column right in column n-1 (lag a
becomes lag a-1 or the target, b becomes b+1).  Following that step from
each entry until it leaves the set gives chains; a chain's first entry is
new in every column, its d-th is the first entry of column n-d.  Prints
the slot tables (new entries first, longest chains first, then the
entries d = 1, 2, ... in their chains' order) and the shuffle table, and
checks both.  Run: python3 research/r13_shift_layout.py
"""
# z index -> signal: 0..5 lags (x[i][q-1-a]), 6..8 x[i-1][q-1 .. q+1], 9 A, 10 B, 11 const, 12 target
sig = [('c', -1 - a) for a in range(6)] + [('p', b) for b in (-1, 0, 1)] + [('A',), ('B',), ('1',), ('c', 0)]
idx = {s: i for i, s in enumerate(sig)}
pairs = [(r, s) for r in range(13) for s in range(r, 13)]  # lsx_tri order
assert len(pairs) == 91


def key(i, j):
    return (min(i, j), max(i, j))


def moved(x):
    """The signal one column to the right, or None where it leaves the set."""
    if x[0] == 'c':
        return ('c', x[1] + 1) if x[1] + 1 <= 0 else None
    if x[0] == 'p':
        return ('p', x[1] + 1) if x[1] + 1 <= 1 else None
    return x if x == ('1',) else None  # column means are not shifted signals


def source(p):
    """The entry of column n-1 equal to entry p of column n, or None (new)."""
    a, b = sig[p[0]], sig[p[1]]
    if a == ('1',) and b == ('1',):
        return None  # the window's count: kept new (a chain of its own)
    ma, mb = moved(a), moved(b)
    return None if ma is None or mb is None else key(idx[ma], idx[mb])


heads = [p for p in pairs if source(p) is None]
child = {source(p): p for p in pairs if source(p) is not None}
chains = []
for h in heads:
    c = [h]
    while c[-1] in child:
        c.append(child[c[-1]])
    chains.append(c)
order = sorted(range(len(chains)), key=lambda i: -len(chains[i]))  # stable
slots = []
d = 0
while True:
    blk = [chains[i][d] for i in order if len(chains[i]) > d]
    if not blk:
        break
    slots += blk
    d += 1
assert len(slots) == 91 and len(set(slots)) == 91
head = {}
dep = {}
for c in chains:
    for d, p in enumerate(c):
        head[p], dep[p] = slots.index(c[0]), d
        if d:  # the chain step is the column step
            assert source(p) == c[d - 1]
assert all(slots.index(c[0]) < len(heads) for c in chains)
print("new entries", len(heads), "deepest", max(dep.values()))
print("LSX13_SLOT", [slots.index(p) for p in pairs])
print("LSX13_HEAD", [head[p] for p in pairs])
print("LSX13_DEP", [dep[p] for p in pairs])
# raw_regressors_13's lanes: 0..7 x[i][q-7 .. q], 8..11 x[i-1][q-2 .. q+1], 12 A, 13 B, 14 const, 15 zero
raw = [6 - a for a in range(6)] + [9, 10, 11] + [12, 13, 14] + [7]
lanes = [(raw[r], raw[s]) for r, s in slots] + [(15, 15)] * 5
for c in range(12):
    ch = lanes[8 * c: 8 * c + 8]
    print("    CHUNK(%d, %s, %s);" % (c, ", ".join(str(p[0]) for p in ch), ", ".join(str(p[1]) for p in ch)))
