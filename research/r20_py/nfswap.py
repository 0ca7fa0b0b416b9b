from load import *
from classes import *
from bgr2 import code_with_pred
import sys
for nm in sys.argv[1:]:
    kind=nm.split('_')[1]
    d=load(nm); c=classes(d,kind)
    b=open(f'/tmp/ex/dumps/{nm}_mu.bin','rb').read()
    r=np.frombuffer(b[320:],rec).reshape(H,W)
    pnf=r['pred'].astype(float); tot=d['bits'].sum()
    parts=partition(c)
    groups={}
    for name,k in parts:
        g=('orders / lines (core+wing)' if ('core' in name or 'wing' in name) else
           'between orders / continuum' if ('between' in name or 'continuum' in name) else 'other (border, overscan, hot/cosmic, saturated)')
        groups[g]=groups.get(g,np.zeros((H,W),bool))|k
    groups['ALL']=np.ones((H,W),bool)
    print(f"\n### {nm}: what-if: the codec's prediction on the noise-free frame (its structural error only, no noise propagation), measured with the coder replay")
    print("| region | pixels | excess B | bytes saved | saved % of stream |"); print("|---|---|---|---|---|")
    for g,k in groups.items():
        p=np.where(k,pnf,d['pred'])
        bb=code_with_pred(d,p)
        print(f"| {g} | {k.sum()} | {(d['bits']-d['fb'])[k].sum()/8:.0f} | {(tot-bb.sum())/8:.0f} | {(tot-bb.sum())/tot*100:.2f} |")
