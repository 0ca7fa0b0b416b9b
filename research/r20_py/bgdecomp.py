from load import *
from classes import *
import sys
def conv_rows(a,k):
    return np.apply_along_axis(lambda v: np.convolve(v,k,'same'),1,a)
for nm in sys.argv[1:]:
    kind=nm.split('_')[1]
    d=load(nm); c=classes(d,kind)
    mu=np.minimum(d['mu'],65535); sd=d['sd']
    deep=[k for n_,k in partition(c) if n_.endswith('< 0.5 sd')][0]
    b=open(f'/tmp/ex/dumps/{nm}_mu.bin','rb').read() if kind!='aurora' and kind!='bias' else None
    runs=[('codec, noisy frame',d['pred'].astype(float))]
    if b: runs.append(('codec, noise-free frame',np.frombuffer(b[320:],rec).reshape(H,W)['pred'].astype(float)))
    for name,p in runs:
        z=(p-mu)/sd
        ok=deep&(np.abs(z)<10)
        eb=np.where(ok,z,0.0); msk=ok.astype(float)
        tot=(eb**2).sum()/msk.sum()
        k=np.ones(9)
        sm=conv_rows(eb,k)/np.maximum(conv_rows(msk,k),1)
        rowm=eb.sum(1)/np.maximum(msk.sum(1),1)
        colm=eb.sum(0)/np.maximum(msk.sum(0),1)
        print(f"{nm} {name}: deep-bg z^2 (|z|<10, {ok.sum()} px) {tot:.3f}: whole-row mean part {np.sum(msk*rowm[:,None]**2)/msk.sum():.3f}, whole-column mean part {np.sum(msk*colm[None,:]**2)/msk.sum():.3f}, 9-px along-row smooth part {np.sum(msk*sm**2)/msk.sum():.3f}; |z|>=10 px: {(deep&(np.abs(z)>=10)).sum()}")
