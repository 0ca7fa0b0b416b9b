from load import *
from classes import *
import sys
def swap_bits(d,mask,emin_mode='keep'):
    """code the frame with residuals x-round(mu) inside mask (codec's elsewhere); contexts recomputed"""
    x=d['pix']; ro=x-np.clip(np.rint(d['mu']),0,65535).astype(np.int64)
    e=np.where(mask,ro,d['e'])
    pred=np.where(mask,x-ro,d['pred'])
    emin=d['emin'].copy()
    if emin_mode=='oracle':
        a=np.abs(ro).astype(np.int64)
        em=np.zeros((H,W),np.int64)
        em[:,1:]+=a[:,:-1]; em[1:,:]+=a[:-1,:]; em[1:,1:]+=a[:-1,:-1]; em[1:,:-1]+=a[:-1,1:]
        colmed=np.median(a,axis=0)
        em=16*em+32*colmed[None,:].astype(np.int64)
        emin=np.where(mask,em,emin)
    ctx=cm_contexts(e,emin,pred,d)
    return cm_code(e,ctx,d)
if __name__=='__main__':
    rows=[]
    for nm in sys.argv[1:]:
        kind=nm.split('_')[1]
        d=load(nm); c=classes(d,kind)
        bits=d['bits']; fb=d['fb']; ex=bits-fb; mu=d['mu']; sd=d['sd']
        o=d['pred']-np.minimum(mu,65535); z2=(o/sd)**2
        tot=bits.sum(); totex=ex.sum()
        print(f"\n### {nm}: stream(ideal) {tot/8:.0f} B, floor {fb.sum()/8:.0f} B, excess {totex/8:.0f} B = {totex/tot*100:.2f}% of stream")
        print("| class | pixels | excess B | % of excess | excess % of stream | bits/px | floor/px | mean z^2 (clip 100) | Llog B | oracle-swap saves B |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for name,k in partition(c):
            if not k.any(): continue
            sw=swap_bits(d,k,'oracle')
            save=(tot-sw.sum())/8
            print(f"| {name} | {k.sum()} | {ex[k].sum()/8:.0f} | {ex[k].sum()/totex*100:.1f} | {ex[k].sum()/tot*100:.2f} | {bits[k].mean():.3f} | {fb[k].mean():.3f} | {np.minimum(z2[k],100).mean():.3f} | {0.5*np.log2(1+z2[k]).sum()/8:.0f} | {save:.0f} |")
        sw=swap_bits(d,np.ones((H,W),bool),'oracle'); sk=swap_bits(d,np.ones((H,W),bool),'keep')
        print(f"| ALL | {H*W} | {totex/8:.0f} | 100 | {totex/tot*100:.2f} | {bits.mean():.3f} | {fb.mean():.3f} | {np.minimum(z2,100).mean():.3f} | {0.5*np.log2(1+z2).sum()/8:.0f} | {(tot-sw.sum())/8:.0f} (Emin kept: {(tot-sk.sum())/8:.0f}) |")
