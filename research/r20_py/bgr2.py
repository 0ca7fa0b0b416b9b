from bgr import *
from table import swap_bits
import sys
PRMS=[(1/32,1/16,4.0),(1/32,1/32,4.0),(1/16,1/16,4.0)]
def code_with_pred(d,pnew,emin=None):
    x=d['pix']; pr=np.clip(np.floor(pnew+0.5),0,65535).astype(np.int64)
    e=x-pr
    ctx=cm_contexts(e,d['emin'] if emin is None else emin,pr,d)
    return cm_code(e,ctx,d)
if __name__=="__main__":
 for nm in sys.argv[1:]:
    kind=nm.split('_')[1]
    d=load(nm); c=classes(d,kind)
    x=d['pix']; mu=np.minimum(d['mu'],65535); sd=d['sd']; tot=d['bits'].sum()
    deep=[k for n_,k in partition(c) if n_.endswith('< 0.5 sd')][0]
    zc=np.minimum(((d['pred']-mu)/sd)**2,100)
    print(nm, 'codec deep-bg z2 %.3f'%zc[deep].mean())
    for prm in PRMS:
        pb=bgr(x,*prm)
        z2=np.minimum(((pb-mu)/sd)**2,100)
        for sf,pw in [(8.0,3)]:
            pbl=blend([d['pred'].astype(float),pb],x.astype(float),sd_floor=sf,power=pw)
            zb=np.minimum(((pbl-mu)/sd)**2,100)
            b=code_with_pred(d,pbl)
            print(f"  {prm} BGR deep z2 {z2[deep].mean():.3f} | blend(sf={sf},p={pw}) deep z2 {zb[deep].mean():.3f} all {zb.mean():.3f} (codec {zc.mean():.3f}) coded {b.sum()/8:.0f} B vs codec {tot/8:.0f}: {(b.sum()-tot)/8:+.0f} B; in deep bg {(b[deep].sum()-d['bits'][deep].sum())/8:+.0f}")
