import numpy as np
from load import H,W
GAIN={'bias':1.5,'dark':2.0,'echelle':1.1,'echelle-arc':1.1,'arc':1.2,'aurora':2.0}
def runmin_v(a,r):
    out=a.copy()
    for k in range(1,r+1):
        out[k:]=np.minimum(out[k:],a[:-k]); out[:-k]=np.minimum(out[:-k],a[k:])
    return out
def runmax_v(a,r):
    out=a.copy()
    for k in range(1,r+1):
        out[k:]=np.maximum(out[k:],a[:-k]); out[:-k]=np.maximum(out[:-k],a[k:])
    return out
def runmin_h(a,r): return runmin_v(a.T,r).T
def runmax_h(a,r): return runmax_v(a.T,r).T
def dil(mask,r=1):
    m=mask.copy()
    for k in range(1,r+1):
        m[k:]|=mask[:-k]; m[:-k]|=mask[k:]; m[:,k:]|=mask[:,:-k]; m[:,:-k]|=mask[:,k:]
    return m
def classes(d,kind):
    g=GAIN[kind]
    mu=d['mu']; sd=d['sd']
    # the light at the response's mean: response_sd = 0.006 x light (no PRNU in AURORA: electrons/gain)
    light=d['resp']/0.006 if kind!='aurora' else d['lam']/g
    art=dil(np.abs(d['art'])>=1.0,1)           # hot pixels and cosmic rays of the simulator, +1 px
    nos=W//32 if kind!='aurora' else 0
    overscan=np.zeros((H,W),bool)
    if nos: overscan[:,W-nos:]=True
    border=np.zeros((H,W),bool); border[:2,:]=True; border[:,:2]=True
    sat=mu>=65000
    # light structure
    if kind in ('echelle','echelle-arc'):
        bg=runmin_v(light,40)                 # between orders: the scattered light
        lc=light-bg
        pk=runmax_v(lc,20)                    # the order's peak in this column
        core=(lc>=0.5*pk)&(pk>2*sd)
        wing=(~core)&(lc>=0.03*pk)&(pk>2*sd)
        names=('order core','order wing','between orders')
    else:  # long slit (arc, aurora): emission lines along the slit; structure along rows
        bg=runmin_h(light,12)
        lc=light-bg
        pk=runmax_h(lc,3)                     # the line's peak within +-3 columns
        core=(lc>=0.5*pk)&(pk>2*sd)
        wing=(~core)&(lc>=0.03*pk)&(pk>2*sd)
        names=('line core','line wing','continuum')
    between=~(core|wing)
    d2=np.zeros((H,W)); d2[:,1:-1]=np.abs(light[:,2:]-2*light[:,1:-1]+light[:,:-2])
    line=dil(d2>1.0*sd,2) if True else None
    # gradient of the light, per direction
    gn=np.zeros((H,W)); gn[:,1:-1]=np.abs(light[:,2:]-light[:,:-2])/2
    gm=np.zeros((H,W)); gm[1:-1,:]=np.abs(light[2:,:]-light[:-2,:])/2
    return dict(sd=sd,names=names,light=light,lc=lc,pk=pk,art=art,overscan=overscan,border=border,sat=sat,core=core,wing=wing,between=between,line=line,gn=gn,gm=gm,d2=d2)
def partition(c):
    """exclusive classes, in priority order"""
    used=np.zeros((H,W),bool); out=[]
    def take(name,m):
        nonlocal used
        k=m&~used; used|=k; out.append((name,k))
    take('border (rows 0-1, cols 0-1)',c['border'])
    take('overscan',c['overscan'])
    take('saturated (mu>=65000)',dil(c['sat'],1))
    take('hot/cosmic (+1 px)',c['art'])
    for s,nm in zip(['core','wing','between'],c['names']):
        if nm.startswith('order'):
            take(f'{nm}, near line',c[s]&c['line'])
            take(f'{nm}, smooth',c[s]&~c['line'])
        elif nm=='between orders' or nm=='continuum':
            deep=c['lc']<0.5*c['sd']
            take(f'{nm}, faint structure (d2>sd)',c[s]&c['line'])
            take(f'{nm}, smooth, light above bg >= 0.5 sd',c[s]&~c['line']&~deep)
            take(f'{nm}, smooth, light above bg < 0.5 sd',c[s]&~c['line']&deep)
        else:
            take(nm,c[s])
    assert used.all()
    return out
