from bgr import *
from bgr2 import code_with_pred
import sys
def nb_range(x):
    x=x.astype(float); big=1e9
    sh=[]
    def s(dm,dn):
        a=np.full((H,W),np.nan)
        a[dm:, max(dn,0):W+min(dn,0)] = x[:H-dm, max(-dn,0):W-max(dn,0)]
        return a
    st=np.stack([s(0,1),s(0,2),s(1,0),s(1,1),s(1,-1),s(2,0)])
    return np.nanmin(st,0),np.nanmax(st,0)
if __name__=='__main__':
  for nm in sys.argv[1:]:
    kind=nm.split('_')[1]
    d=load(nm); c=classes(d,kind)
    x=d['pix']; mu=np.minimum(d['mu'],65535); sd=d['sd']; tot=d['bits'].sum()
    lo,hi=nb_range(x)
    p=d['pred'].astype(float)
    for f in [1.0,2.0]:
        r=hi-lo; m=np.maximum(f*r,32)
        pc=np.where(np.isnan(lo),p,np.clip(p,lo-m,hi+m))
        ch=(pc!=p)
        b=code_with_pred(d,pc)
        print(f"{nm} clamp to neighbours' range +- max({f} x range, 32): changed {ch.sum()} px, coded {(b.sum()-tot)/8:+.0f} B ({(b.sum()-tot)/tot*100:+.3f}%); z2(clip100) on changed: before {np.minimum(((p-mu)/sd)**2,100)[ch].mean():.1f} after {np.minimum(((pc-mu)/sd)**2,100)[ch].mean():.1f}")
