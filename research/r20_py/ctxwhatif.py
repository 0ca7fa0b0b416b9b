from load import *
from classes import *
from table import swap_bits
import sys
def sdclass(sd,n=16):
    l=np.log2(sd); lo,hi=np.percentile(l,0.1),np.percentile(l,99.9)
    return np.clip(((l-lo)/(hi-lo+1e-9)*n).astype(int),0,n-1)
for nm in sys.argv[1:]:
    kind=nm.split('_')[1]
    d=load(nm)
    bits=d['bits']; fb=d['fb']; mu=np.minimum(d['mu'],65535); sd=d['sd']; x=d['pix']
    tot=bits.sum()
    ro=x-np.clip(np.rint(mu),0,65535).astype(np.int64)
    nib=int(d['hd'][4]); act=d['ctx']//nib
    sdc=sdclass(sd)
    r={}
    r['codec residuals, codec contexts (prior on)']=tot
    r['codec residuals, codec contexts (prior off)']=cm_code(d['e'],d['ctx'],d,prior=0).sum()
    c2=(sdc*4+np.minimum(act//3,3)).astype(np.uint8)
    r['codec residuals, 16 true-sd classes x 4 codec activity groups (prior off)']=cm_code(d['e'],c2,d,nctx=64,nib=4,prior=0).sum()
    c3=sdc.astype(np.uint8)
    r['codec residuals, 16 true-sd classes only (prior off)']=cm_code(d['e'],c3,d,nctx=16,nib=1,prior=0).sum()
    r['oracle residuals x-round(mu), codec-style contexts (oracle Emin)']=swap_bits(d,np.ones((H,W),bool),'oracle').sum()
    r['oracle residuals, 16 true-sd classes (prior off)']=cm_code(ro,c3,d,nctx=16,nib=1,prior=0).sum()
    r['oracle residuals, 64 true-sd classes (prior off)']=cm_code(ro,sdclass(sd,64).astype(np.uint8),d,nctx=64,nib=1,prior=0).sum()
    print(f"\n### {nm}: floor {fb.sum()/8:.0f} B")
    print("| variant | bytes (ideal) | over floor B | vs codec B |"); print("|---|---|---|---|")
    for k,v in r.items(): print(f"| {k} | {v/8:.0f} | {(v-fb.sum())/8:.0f} | {(v-tot)/8:+.0f} |")
