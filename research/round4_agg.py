#!/usr/bin/env python3
"""Aggregates research/enc_search.c output (round 4): per-frame and total bytes
of each lever.  usage: round4_agg.py full.txt [crop.txt]"""
import sys, collections
def load(path):
    d = collections.defaultdict(dict)
    for line in open(path):
        f = line.split()
        if len(f) != 4 or not f[3].isdigit(): continue
        d[f[0]][(f[1], f[2])] = int(f[3])
    return d
full = load(sys.argv[1])
crop = None
for a in sys.argv[2:]:
    if a.startswith('crop='): crop = load(a[5:])
    elif a.startswith('anchor='): anchor = a[6:]
    else:
        for fr, d in load(a).items(): full[fr].update(d)
frames = [k for k in full if ('baseline', 'enc') in full[k]]
def row(name, fn):
    tot0 = tot1 = 0; per = []
    for fr in frames:
        b = full[fr][('baseline', 'enc')]
        try: n = fn(fr)
        except KeyError: n = None
        if n is None: per.append('   -  '); n = b
        else: per.append('%+6.2f' % (100.0 * (n - b) / b))
        tot0 += b; tot1 += n
    print('%-34s %+6.3f%%  %s' % (name, 100.0 * (tot1 - tot0) / tot0, ' '.join(per)))
print('%-34s %7s  %s' % ('lever (vs baseline)', 'total', ' '.join('%6s' % fr[:6] for fr in frames)))
F = lambda fr, s, f: full[fr][('forget', 's%d_f%d' % (s, f))]
row('set0 f2 only (std ctx)', lambda fr: F(fr, 0, 2))
for fs in ([1, 2], [2, 3], [1, 2, 3], [1, 2, 3, 4], [2, 3, 4]):
    row('oracle set{0,1} x f%s' % fs, lambda fr, fs=fs: min(F(fr, s, f) for s in (0, 1) for f in fs))
row('oracle set0 f{1..4}, set1 f{1,2}', lambda fr: min([F(fr, 0, f) for f in (1, 2, 3, 4)] + [F(fr, 1, f) for f in (1, 2)]))
row('oracle set0 f{2,3,4}, set1 f{1,2}', lambda fr: min([F(fr, 0, f) for f in (2, 3, 4)] + [F(fr, 1, f) for f in (1, 2)]))
def bestforget(fr):
    return min(F(fr, s, f) for s in (0, 1) for f in (1, 2, 3, 4))
for lev, vals in (('M', (5, 7, 11, 13)), ('K', (4, 8, 10, 12)), ('R', (10, 14))):
    for v in vals:
        row('best(set,f) + %s=%d' % (lev, v), lambda fr, lev=lev, v=v: full[fr][(lev, str(v))])
    row('best(set,f) + oracle %s' % lev, lambda fr, lev=lev, vals=vals: min([bestforget(fr)] + [full[fr][(lev, str(v))] for v in vals]))
row('lscombo (oracle each, combined)', lambda fr: full[fr][('lscombo', [k for k in full[fr] if k[0] == 'lscombo'][0][1])])
ctxkeys = sorted({k[1] for fr in frames for k in full[fr] if k[0] in ('ctx', 'ioff', 'seg')})
def lsc(fr): return full[fr][('ctx', 'std')]
print('\n-- context levers, vs lscombo with the standard contexts --')
def row2(name, fn):
    tot0 = tot1 = 0; per = []
    for fr in frames:
        b = lsc(fr); n = fn(fr)
        per.append('%+6.2f' % (100.0 * (n - b) / b)); tot0 += b; tot1 += n
    print('%-34s %+6.3f%%  %s' % (name, 100.0 * (tot1 - tot0) / tot0, ' '.join(per)))
for lev in ('ctx', 'ioff', 'seg'):
    for c in sorted({k[1] for fr in frames for k in full[fr] if k[0] == lev}):
        if all((lev, c) in full[fr] for fr in frames):
            row2('%s %s' % (lev, c), lambda fr, c=c, lev=lev: full[fr][(lev, c)])
def minctx(fr, pred):
    return min([lsc(fr)] + [v for k, v in full[fr].items() if k[0] == 'ctx' and pred(k[1])])
row2('oracle dp pen8 + std', lambda fr: minctx(fr, lambda c: c.startswith('dp') and c.endswith('pen8')))
row2('oracle dp{8,12,16}x4 pen8 + std', lambda fr: minctx(fr, lambda c: c in ('dp8x4_pen8', 'dp12x4_pen8', 'dp16x4_pen8')))
row2('oracle dp{8,12,16}x4 pen0,8 + std', lambda fr: minctx(fr, lambda c: c in ('dp8x4_pen8', 'dp12x4_pen8', 'dp16x4_pen8','dp8x4_pen0', 'dp12x4_pen0', 'dp16x4_pen0')))
row2('oracle all dp + std', lambda fr: minctx(fr, lambda c: c.startswith('dp') or c.startswith('quant')))
for subset in (['dp8x4_pen0'], ['dp8x4_pen8'], ['dp8x4_pen0', 'dp8x4_pen8'], ['dp8x4_pen0', 'dp10x4_pen0'],
               ['dp8x4_pen0', 'dp12x4_pen0', 'dp16x4_pen0'], ['dp8x4_pen0', 'dpI_default16x4'],
               ['dp8x4_pen0', 'dp8x4_pen8', 'dpI_default16x4'], ['cd_from_best'], ['cd_from_best', 'cd_from_std']):
    row2('oracle std + %s' % '+'.join(subset), lambda fr, subset=subset: minctx(fr, lambda c: c in subset))
row2('best2 (everything, + descent)', lambda fr: full[fr][('ctx', 'best2')])
if crop:
    print('\n-- cheap rules: choice made on the middle rows (crop), applied to the full frame --')
    def pick(fr, keys):
        c = min(keys, key=lambda k: crop[fr][k])
        return full[fr][c]
    row('crop: set{0,1} x f{1..4}', lambda fr: pick(fr, [('forget', 's%d_f%d' % (s, f)) for s in (0, 1) for f in (1, 2, 3, 4)]))
    row('crop: set{0,1} x f{1,2,3}', lambda fr: pick(fr, [('forget', 's%d_f%d' % (s, f)) for s in (0, 1) for f in (1, 2, 3)]))
    row('crop: set0 f{2,3,4}, set1 f{1,2}', lambda fr: pick(fr, [('forget', 's0_f%d' % f) for f in (2, 3, 4)] + [('forget', 's1_f%d' % f) for f in (1, 2)]))
    for lev, vals in (('K', (4, 8, 10, 12)), ('M', (5, 7, 11, 13))):
        row('best(set,f) + crop-chosen %s' % lev, lambda fr, lev=lev, vals=vals: min(bestforget(fr), pick(fr, [(lev, str(v)) for v in vals])) if False else pick(fr, [(lev, str(v)) for v in vals] ))

# ratios vs cjxl -e 9: anchors file lines "frame packfile rest_gz jxl"; extra
# files "cheap=PATH" handled by the caller (see round4-encoder.md)
