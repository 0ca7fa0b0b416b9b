from load import *
from classes import *
import sys
for nm in sys.argv[1:]:
    kind=nm.split('_')[1]
    d=load(nm); c=classes(d,kind)
    b=open(f'/tmp/ex/dumps/{nm}_mu.bin','rb').read()
    r=np.frombuffer(b[320:],rec).reshape(H,W)
    mu=np.minimum(d['mu'],65535); sd=d['sd']; mur=np.clip(np.rint(d['mu']),0,65535)
    assert np.array_equal(r['pred'].astype(np.int64)+r['e'],mur.astype(np.int64))
    zs=np.minimum(((r['pred']-mur)/sd)**2,100); zn=np.minimum(((d['pred']-mu)/sd)**2,100)
    ex=d['bits']-d['fb']
    print(f"\n### {nm}: codec on the noisy frame vs the same codec on the noise-free frame round(mu) (error in units of the noisy frame's noise sd)")
    print("| class | pixels | excess B (noisy) | z^2 noisy | z^2 noise-free (structure alone) |"); print("|---|---|---|---|---|")
    for name,k in partition(c)+[('ALL',np.ones((H,W),bool))]:
        if k.sum()<1000: continue
        print(f"| {name} | {k.sum()} | {ex[k].sum()/8:.0f} | {zn[k].mean():.3f} | {zs[k].mean():.3f} |")
