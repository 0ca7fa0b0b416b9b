from load import *
from classes import *
import sys
for nm in sys.argv[1:]:
    kind=nm.split('_')[1]
    d=load(nm); c=classes(d,kind); mu=np.minimum(d['mu'],65535); sd=d['sd']
    vs={'base (f=1,M=9)':d}
    for tag in ['f2','m17']:
        b=open(f'/tmp/ex/dumps/{nm}_{tag}.bin','rb').read()
        r=np.frombuffer(b[320:],rec).reshape(H,W)
        vs[tag]={'bits':r['bits'].astype(float),'pred':r['pred'].astype(float),'pp':r['pp']}
    print(f"\n### {nm}: per-class ideal bytes of whole-stream variants (EX_F1=2: set 2 with LS forgetting 1/4; EX_M=17: training window 17)")
    print("| class | "+" | ".join(f"{k} B (z2, LS z2)" for k in vs)+" |"); print("|---"*(len(vs)+1)+"|")
    best=0
    for name,k in partition(c)+[('ALL',np.ones((H,W),bool))]:
        cells=[]; bs=[]
        for t,v in vs.items():
            z=np.minimum(((v['pred']-mu)/sd)**2,100)[k].mean(); zl=np.minimum(((v['pp'][:,:,0]-mu)/sd)**2,100)[k].mean()
            cells.append(f"{v['bits'][k].sum()/8:.0f} ({z:.3f}, {zl:.2f})"); bs.append(v['bits'][k].sum()/8)
        if name!='ALL': best+=min(bs)
        print(f"| {name} | "+" | ".join(cells)+" |")
    print(f"  per-class best of the three (oracle class choice): {best:.0f} B vs base {d['bits'].sum()/8:.0f} B: {best-d['bits'].sum()/8:+.0f} B")
