from bgr import *
from bgr2 import code_with_pred
from orders import sh
import sys
def rank1(xb,L,K,s_loc):
    # row part: sum_{j=1..L} x[m][n-j]; column part: sum_{k=1..K} x[m-k][n]; block: sum_{k=1..K, j=1..L} x[m-k][n-j]
    R=sum(sh(xb,0,j) for j in range(1,L+1))
    C=sum(sh(xb,k,0) for k in range(1,K+1))
    B=sum(sh(R,k,0) for k in range(1,K+1))
    ok=B>3*s_loc*np.sqrt(K*L)
    return np.where(ok,R*C/np.where(ok,B,1),np.nan)
if __name__=='__main__':
  for nm in sys.argv[1:]:
    kind=nm.split('_')[1]
    d=load(nm); c=classes(d,kind)
    x=d['pix'].astype(float); mu=np.minimum(d['mu'],65535); sd=d['sd']; tot=d['bits'].sum()
    parts=dict(partition(c))
    b=bgr(d['pix'],1/32,1/32,4.0); xb=x-b
    s_loc=np.sqrt(np.maximum(b,1)/1.1+9)
    names=[k for k in parts if ('order' in k or 'line' in k) and parts[k].sum()>1000]
    zc=np.minimum(((d['pred']-mu)/sd)**2,100)
    print(f"\n### {nm}: rank-1 local predictor p = bg + R*C/B, mean z^2 (clip 100) where defined (coverage in brackets)")
    print("| predictor | "+" | ".join(names)+" |"); print("|---"*(len(names)+1)+"|")
    print("| codec | "+" | ".join(f"{zc[parts[k]].mean():.3f}" for k in names)+" |")
    for L,K in [(1,3),(1,6),(1,12),(2,6)]:
        p=rank1(xb,L,K,s_loc)
        z=np.minimum(((b+p-mu)/sd)**2,100)
        cells=[]
        for k in names:
            m=parts[k]&~np.isnan(p)
            cells.append(f"{z[m].mean():.3f} vs codec {zc[m].mean():.3f} [{m.sum()/parts[k].sum()*100:.0f}%]")
        print(f"| rank1 L={L} K={K} | "+" | ".join(cells)+" |")
