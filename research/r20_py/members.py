from load import *
from classes import *
import sys
NAMES={2:['LS','CM','RV','AL','RL1','RL2','BG'],0:['LS','CM','AF','BG']}
for nm in sys.argv[1:]:
    kind=nm.split('_')[1]
    d=load(nm); c=classes(d,kind)
    mu=np.minimum(d['mu'],65535); sd=d['sd']
    names=NAMES[int(d['hd'][2])]
    print(f"\n### {nm}: mean (pred - mu)^2 / sd^2 per member (z^2 clipped at 100), rows >= 2")
    print("| class | pixels | "+" | ".join(names)+" | blend P1 | +cascade (pred) | best member oracle |")
    print("|"+"---|"*(len(names)+5))
    valid=np.zeros((H,W),bool); valid[2:,:]=True
    zs=[np.minimum(((d['pp'][:,:,k]-mu)/sd)**2,100) for k in range(len(names))]
    zb=np.minimum(((d['pred1']-mu)/sd)**2,100); zc=np.minimum(((d['pred']-mu)/sd)**2,100)
    zmin=np.min(np.stack(zs),axis=0)
    for name,k in partition(c)+[('ALL',np.ones((H,W),bool))]:
        k=k&valid
        if not k.any(): continue
        print(f"| {name} | {k.sum()} | "+" | ".join(f"{z[k].mean():.3f}" for z in zs)+f" | {zb[k].mean():.3f} | {zc[k].mean():.3f} | {zmin[k].mean():.3f} |")
