import numpy as np
W=H=1024
N=W*H
rec=np.dtype({'names':['pred','pred1','e','emin','ctx','bits','pp'],
  'formats':['<u2','<i4','<i4','<i4','u1','<f4',('<f4',7)],
  'offsets':[0,4,8,12,16,20,24],'itemsize':52})
def load(name):
    kind,seed,lev=name.split('_')[1:]
    b=open(f'/tmp/ex/dumps/{name}.bin','rb').read()
    hd=np.frombuffer(b[:64],'<i4')
    thr=np.frombuffer(b[64:64+256],'<u4')
    r=np.frombuffer(b[320:],rec).reshape(H,W)
    sf=f'/tmp/ex/dumps/sim_{kind}_{seed[1:]}_{lev[1:]}.sim'
    s=open(sf,'rb').read()
    pix=np.frombuffer(s[:2*N],'<u2').reshape(H,W)
    o=2*N
    planes={}
    for k in ['mu','lam','resp','fb','sd','art']:
        planes[k]=np.frombuffer(s[o:o+8*N],'<f8').reshape(H,W); o+=8*N
    d=dict(hd=hd,thr=thr,pix=pix.astype(np.int64),pred=r['pred'].astype(np.int64),pred1=r['pred1'].astype(np.int64),
           e=r['e'].astype(np.int64),emin=r['emin'],ctx=r['ctx'],bits=r['bits'].astype(np.float64),pp=r['pp'],**planes)
    return d

import ctypes
_lib=ctypes.CDLL('/tmp/ex/libcmsim.so')
_lib.cm_code.restype=ctypes.c_double
def P(a): return a.ctypes.data_as(ctypes.c_void_p)
def cm_code(e,ctx,d,nctx=None,nib=None,prior=None):
    e=np.ascontiguousarray(e,dtype=np.int32).ravel(); ctx=np.ascontiguousarray(ctx,dtype=np.uint8).ravel()
    hd=d['hd']
    nctx=int(hd[3]*hd[4]) if nctx is None else nctx
    nib=int(hd[4]) if nib is None else nib
    prior=int(hd[5]) if prior is None else prior
    out=np.zeros(e.size,np.float32)
    _lib.cm_code(P(e),P(ctx),ctypes.c_size_t(e.size),nctx,nib,prior,P(out))
    return out.reshape(H,W).astype(np.float64)
def cm_contexts(e,emin,pred,d):
    hd=d['hd']
    e=np.ascontiguousarray(e,dtype=np.int32); emin=np.ascontiguousarray(emin,dtype=np.int32)
    pred=np.ascontiguousarray(np.clip(pred,0,65535),dtype=np.uint16)
    thr=np.ascontiguousarray(d['thr'],dtype=np.uint32); ib=np.ascontiguousarray(hd[10:14],dtype=np.uint8)
    ctx=np.zeros((H,W),np.uint8)
    _lib.cm_contexts(P(e),P(emin),P(pred),W,H,P(thr),int(hd[3]),int(hd[6]),P(ib),int(hd[4]),P(ctx))
    return ctx
def _g(fn,x,c,s):
    x=np.ascontiguousarray(x,dtype=np.float64).ravel(); c=np.ascontiguousarray(np.broadcast_to(c,(H,W)),dtype=np.float64).ravel()
    s=np.ascontiguousarray(np.broadcast_to(s,(H,W)),dtype=np.float64).ravel()
    out=np.zeros(x.size)
    fn(P(x),P(c),P(s),ctypes.c_size_t(x.size),P(out))
    return out.reshape(H,W)
def gauss_bits(x,c,s): return _g(_lib.gauss_bits,x,c,s)
def laplace_bits(x,c,s): return _g(_lib.laplace_bits,x,c,s)
