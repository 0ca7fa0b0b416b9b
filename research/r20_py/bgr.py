from load import *
from classes import *
import sys
_b=ctypes.CDLL('/tmp/ex/libbgr.so')
def bgr(x,arow=1/16,acol=1/8,kout=4.0):
    x=np.ascontiguousarray(x,dtype=np.int64); out=np.zeros((H,W))
    _b.bgr_predict(P(x),W,H,ctypes.c_double(arow),ctypes.c_double(acol),ctypes.c_double(kout),P(out))
    return out
def blend(preds,x,sd_floor=1.0,power=3):
    """causal blend by the members' errors at W, WW, N, NW, NE (as lsmix set 1/2's error level)"""
    ws=[];
    for p in preds:
        a=np.abs(x-p)
        E=np.zeros((H,W))
        E[:,1:]+=a[:,:-1]; E[:,2:]+=a[:,:-2]; E[1:,:]+=a[:-1,:]; E[1:,1:]+=a[:-1,:-1]; E[1:,:-1]+=a[:-1,1:]
        ws.append(1.0/(E/sd_floor+1.0)**power)
    ws=np.array(ws); return (ws*np.array(preds)).sum(0)/ws.sum(0)
if __name__=='__main__':
    for nm in sys.argv[1:]:
        kind=nm.split('_')[1]
        d=load(nm); c=classes(d,kind)
        x=d['pix']; mu=np.minimum(d['mu'],65535); sd=d['sd']
        for prm in [(1/16,1/8,4.0),(1/32,1/8,4.0),(1/16,1/16,3.0)]:
            pb=bgr(x,*prm)
            z2=np.minimum(((pb-mu)/sd)**2,100); zc=np.minimum(((d['pred']-mu)/sd)**2,100)
            pbl=blend([d['pred'].astype(float),pb],x.astype(float))
            zb=np.minimum(((pbl-mu)/sd)**2,100)
            print(nm,prm)
            for name,k in partition(c):
                if k.sum()<1000: continue
                print(f"   {name:55s} {k.sum():7d} codec {zc[k].mean():.3f} BGR {z2[k].mean():.3f} blend {zb[k].mean():.3f}")
