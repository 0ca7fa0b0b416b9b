from load import *
from classes import *
import sys
for nm in sys.argv[1:]:
    kind=nm.split('_')[1]
    d=load(nm); c=classes(d,kind)
    bits=d['bits']; fb=d['fb']; ex=bits-fb; mu=np.minimum(d['mu'],65535); sd=d['sd']
    o=d['pred']-mu; z2=np.minimum((o/sd)**2,100)
    tot=bits.sum(); totex=ex.sum()
    print(f"\n### {nm} (a) by decile of the true mean mu")
    print("| decile | mu range | pixels | excess B | % of excess | bits/px | floor/px | mean z^2 |"); print("|---|---|---|---|---|---|---|---|")
    q=np.percentile(mu,np.arange(0,101,10)); q[-1]+=1
    for i in range(10):
        k=(mu>=q[i])&(mu<q[i+1])
        print(f"| {i+1} | {q[i]:.0f}-{q[i+1]:.0f} | {k.sum()} | {ex[k].sum()/8:.0f} | {ex[k].sum()/totex*100:.1f} | {bits[k].mean():.3f} | {fb[k].mean():.3f} | {z2[k].mean():.3f} |")
    # (b) structure direction: gradients of the light (without PRNU), in units of the pixel's noise sd
    gn=c['gn']/sd; gm=c['gm']/sd
    print(f"\n### {nm} (b) by the light's gradient (in noise sd): along the row (spectral, |dmu/dn|) vs along the column (spatial, |dmu/dm|); hot/cosmic/saturated excluded")
    print("| class | pixels | excess B | % of excess | bits/px | floor/px | mean z^2 |"); print("|---|---|---|---|---|---|---|")
    art=c['art']|dil(c['sat'],1)
    g=np.maximum(gn,gm)
    cl=[('flat (both < 0.25 sd)',g<0.25)]
    for lo,hi in [(0.25,1),(1,4),(4,1e9)]:
        band=(g>=lo)&(g<hi)
        cl.append((f'max in [{lo},{hi}) sd, row-dominant (|d/dn| > 2 |d/dm|)',band&(gn>2*gm)))
        cl.append((f'max in [{lo},{hi}) sd, column-dominant (|d/dm| > 2 |d/dn|)',band&(gm>2*gn)))
        cl.append((f'max in [{lo},{hi}) sd, both',band&~(gn>2*gm)&~(gm>2*gn)))
    for name,k in cl:
        k=k&~art
        if k.sum()==0: continue
        print(f"| {name} | {k.sum()} | {ex[k].sum()/8:.0f} | {ex[k].sum()/totex*100:.1f} | {bits[k].mean():.3f} | {fb[k].mean():.3f} | {z2[k].mean():.3f} |")
    k=art; print(f"| hot/cosmic/saturated | {k.sum()} | {ex[k].sum()/8:.0f} | {ex[k].sum()/totex*100:.1f} | {bits[k].mean():.3f} | {fb[k].mean():.3f} | {z2[k].mean():.3f} |")
    # (e) borders
    print(f"\n### {nm} (e) borders (overlapping classes)")
    print("| class | pixels | excess B | % of excess | bits/px | floor/px | mean z^2 |"); print("|---|---|---|---|---|---|---|")
    for name,sl in [('row 0',np.s_[0:1,:]),('rows 1-7',np.s_[1:8,:]),('rows 8-31',np.s_[8:32,:]),('col 0-1',np.s_[:,0:2]),('cols 2-15',np.s_[:,2:16]),('cols W-48..W-33 (last lit)',np.s_[:,W-48:W-32]),('overscan W-32..',np.s_[:,W-32:]),('last 16 cols',np.s_[:,W-16:])]:
        k=np.zeros((H,W),bool); k[sl]=True
        print(f"| {name} | {k.sum()} | {ex[k].sum()/8:.0f} | {ex[k].sum()/totex*100:.1f} | {bits[k].mean():.3f} | {fb[k].mean():.3f} | {z2[k].mean():.3f} |")
