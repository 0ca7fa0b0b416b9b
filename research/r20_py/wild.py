from load import *
from classes import *
from clamp import nb_range
from bgr2 import code_with_pred
import sys
NM={2:7,0:4}
for nm in sys.argv[1:]:
    d=load(nm); kind=nm.split('_')[1]
    x=d['pix']; mu=np.minimum(d['mu'],65535); sd=d['sd']; tot=d['bits'].sum()
    lo,hi=nb_range(x); nmem=NM[int(d['hd'][2])]
    pp=d['pp'][:,:,:nmem].astype(float)
    p=d['pred'].astype(float)
    for f in [1.0,2.0]:
        m=np.maximum(f*(hi-lo),32)
        wild=~np.isnan(lo)&((p<lo-m)|(p>hi+m))
        inr=(pp>=(lo-m)[...,None])&(pp<=(hi+m)[...,None])
        ppm=np.where(inr,pp,np.nan)
        with np.errstate(all='ignore'):
            med=np.nanmedian(ppm,axis=2)
        med=np.where(np.isnan(med),np.clip(p,lo-m,hi+m),med)
        pc=np.where(wild,med,p)
        b=code_with_pred(d,pc)
        z0=np.minimum(((p-mu)/sd)**2,100); z1=np.minimum(((pc-mu)/sd)**2,100)
        print(f"{nm}: pred outside neighbours' range +-max({f} x range,32): {wild.sum()} px; replaced by the median of the in-range members: z2 there {z0[wild].mean():.1f} -> {z1[wild].mean():.1f}; coded {(b.sum()-tot)/8:+.0f} B; excess of these px in the codec {(d['bits']-d['fb'])[wild].sum()/8:.0f} B")
