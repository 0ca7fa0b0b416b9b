from bgr import *
from bgr2 import code_with_pred
import sys
def sh(a,dm,dn):
    """value at (m-dm, n-dn); edge-replicated"""
    out=np.empty_like(a)
    mi=np.clip(np.arange(H)-dm,0,H-1); ni=np.clip(np.arange(W)-dn,0,W-1)
    return a[np.ix_(mi,ni)]
#rng=np.random.default_rng(1)
if __name__=="__main__":
 for nm in sys.argv[1:]:
    kind=nm.split('_')[1]
    d=load(nm); c=classes(d,kind)
    x=d['pix'].astype(float); mu=np.minimum(d['mu'],65535); sd=d['sd']; tot=d['bits'].sum()
    parts=dict(partition(c))
    b=bgr(d['pix'],1/32,1/32,4.0)
    xb=x-b
    xW,xN,xNW,xNE,xWW,xNN=sh(xb,0,1),sh(xb,1,0),sh(xb,1,1),sh(xb,1,-1),sh(xb,0,2),sh(xb,2,0)
    s_loc=np.sqrt(np.maximum(b,1)/1.1+9)   # rough noise sd from the level (no oracle)
    preds={}
    den=np.where(np.abs(xNW)<3*s_loc,np.nan,xNW)
    ratio=np.clip(xN/den,0.25,4)
    preds['mult xW*xN/xNW']=b+np.where(np.isnan(ratio),xW+xN-xNW,xW*ratio)
    # noise-reduced multiplicative: the ratios from 2-pixel sums
    den2=xNW+sh(xb,1,2); num2=xN+xNW
    r2=np.clip(num2/np.where(np.abs(den2)<6*s_loc,np.nan,den2),0.25,4)
    preds['mult, 2-px sums']=b+np.where(np.isnan(r2),xW+xN-xNW,xW*r2)
    # column-direction ratio: x[m][n] = x[m-1][n] * x[m][n-1]/x[m-1][n-1] is the same; row-ratio from the left pair
    preds['gradient (MED-like) xW+xN-xNW']=b+xW+xN-xNW
    zc=np.minimum(((d['pred']-mu)/sd)**2,100)
    names=[k for k in parts if ('order' in k or 'line' in k) and parts[k].sum()>1000]
    print(f"\n### {nm}: mean z^2 (clip 100) in the order / line classes")
    print("| predictor | "+" | ".join(names)+" | coded B (blend with codec pred) |"); print("|---"*(len(names)+2)+"|")
    print("| codec | "+" | ".join(f"{zc[parts[k]].mean():.3f}" for k in names)+f" | {tot/8:.0f} |")
    for pn,p in preds.items():
        z=np.minimum(((p-mu)/sd)**2,100)
        pbl=blend([d['pred'].astype(float),p],x,sd_floor=8.0,power=3)
        zb=np.minimum(((pbl-mu)/sd)**2,100)
        bb=code_with_pred(d,pbl)
        print(f"| {pn} | "+" | ".join(f"{z[parts[k]].mean():.3f}" for k in names)+" | |")
        print(f"| codec+{pn} blend | "+" | ".join(f"{zb[parts[k]].mean():.3f}" for k in names)+f" | {bb.sum()/8:.0f} ({(bb.sum()-tot)/8:+.0f}) |")
    # upper-bound what-ifs: class prediction error scaled down (pred' = mu + f (pred - mu)) in a class
    print(f"  what-if (measured by the coder replay): the codec's error (pred - mu) scaled by f inside a class")
    for cl in [k for k in parts if parts[k].sum()>1000 and k not in ('overscan','border (rows 0-1, cols 0-1)')]:
        for f in [0.5]:
            p=np.where(parts[cl],mu+f*(d['pred']-mu),d['pred'])
            bb=code_with_pred(d,p)
            print(f"    {cl:55s} f={f}: {(bb.sum()-tot)/8:+.0f} B")
