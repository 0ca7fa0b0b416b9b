from load import *
from classes import *
from table import swap_bits
import sys
def boxsum(a,r):
    c=np.cumsum(np.cumsum(np.pad(a,((r+1,r),(r+1,r))),0),1)
    return c[2*r+1:,2*r+1:]-c[:-2*r-1,2*r+1:]-c[2*r+1:,:-2*r-1]+c[:-2*r-1,:-2*r-1]
out=[]
for nm in sys.argv[1:]:
    kind=nm.split('_')[1]
    d=load(nm); c=classes(d,kind)
    bits=d['bits']; fb=d['fb']; ex=bits-fb; mu=np.minimum(d['mu'],65535); sd=d['sd']
    x=d['pix'].astype(float); pred=d['pred'].astype(float)
    o=pred-mu; z2=(o/sd)**2
    tot=bits.sum(); totex=ex.sum()
    # scale oracle: noise variance + local mean squared prediction error (5x5, centre excluded)
    o2=np.minimum(o**2, 1e8)
    loc=(boxsum(o2,2)-o2)/24
    sde=np.sqrt(sd**2+loc)
    gS=gauss_bits(x,pred,sde); lS=laplace_bits(x,pred,sde)
    gM=gauss_bits(x,mu,sd)     # gaussian at the truth (vs floor: the shape of the noise)
    sw_all=swap_bits(d,np.ones((H,W),bool),'oracle')
    print(f"\n### {nm}: stream(ideal code length) {tot/8:.0f} B, floor {fb.sum()/8:.0f} B, excess {totex/8:.0f} B = {totex/tot*100:.2f}% of stream")
    print("| class | pixels | excess B | % of excess | excess % of stream | bits/px | floor/px | mean z^2 | oracle-pred saves B (measured, codec coder) | oracle pred left over floor B | scale-oracle Gauss: pred loss B | codec - scale-oracle B (context loss) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    parts=partition(c)+[('ALL',np.ones((H,W),bool))]
    for name,k in parts:
        if not k.any(): continue
        sw=swap_bits(d,k,'oracle') if name!='ALL' else sw_all
        save=(tot-sw.sum())/8
        left=(sw_all[k]-fb[k]).sum()/8
        ploss=(gS[k]-gM[k]).sum()/8
        closs=(bits[k]-gS[k]).sum()/8
        print(f"| {name} | {k.sum()} | {ex[k].sum()/8:.0f} | {ex[k].sum()/totex*100:.1f} | {ex[k].sum()/tot*100:.2f} | {bits[k].mean():.3f} | {fb[k].mean():.3f} | {np.minimum(z2[k],100).mean():.3f} | {save:.0f} | {left:.0f} | {ploss:.0f} | {closs:.0f} |")
    print(f"  Gaussian(x|mu,sd) vs floor: {(gM.sum()-fb.sum())/8:.0f} B; scale-oracle Laplacian instead of Gaussian: pred+shape loss {(lS.sum()-gM.sum())/8:.0f} B vs Gaussian {(gS.sum()-gM.sum())/8:.0f} B")
