from load import *
from classes import *
import sys, time
def run_ls(x, weighted, forget=0.5, M=9, K=6, ridge=2**-12, ioff=0.0, g=1.1, r=3.0):
    x=x.astype(float); R=(M-1)//2
    A=np.zeros(W); B=np.zeros(W)
    D=K+6; pred=np.zeros((H,W)); G=np.zeros((W,D+1,D+1))
    def regs(m, Am, Bm):
        row=x[m]; prev=x[m-1] if m>0 else np.zeros(W)
        Z=np.zeros((W,D+1))
        for j in range(K):
            Z[j+1:,j]=row[:W-j-1]
        Z[1:,K]=prev[:-1]; Z[:,K+1]=prev; Z[:-1,K+2]=prev[1:]
        Z[:,K+3]=Am; Z[:,K+4]=Bm; Z[:,K+5]=1.0; Z[:,D]=row
        return Z
    Ahist=[]
    for m in range(H):
        if m==0:
            pred[0,1:]=x[0,:-1]
        else:
            Zc=regs(m,A,B)
            Ad=G[:,:D,:D].copy(); idx=np.arange(D)
            Ad[:,idx,idx]*=1+ridge; Ad[:,idx,idx]+=1e-9
            h=G[:,:D,D]
            try:
                a=np.linalg.solve(Ad,h[...,None])[...,0]
            except np.linalg.LinAlgError:
                a=np.zeros((W,D))
            p=np.einsum('nd,nd->n',a,Zc[:,:D])
            bad=~np.isfinite(p)|(np.abs(G[:,0,0])<1)
            p[bad]=x[m-1][bad]
            pred[m]=p
        # the row joins the training (as the codec: row m's equations with the means before row m)
        Z=regs(m,A,B) if m>0 else None
        if m>0:
            w=1.0/(r*r+np.maximum(x[m]-ioff,0)/g) if weighted else np.ones(W)
            w=w*(1.0/np.mean(w))
            S=np.einsum('n,ni,nj->nij',w,Z,Z)
            cs=np.cumsum(np.concatenate([np.zeros((1,D+1,D+1)),S]),0)
            lo=np.clip(np.arange(W)-R,0,W); hi=np.clip(np.arange(W)+R+1,0,W)
            G=G*forget+(cs[hi]-cs[lo])
        v=x[m]
        if m==0: A=v.copy(); B=v.copy()
        else: A=A+(v-A)/16; B=B+(v-B)/4
    return pred
if __name__=='__main__':
    for nm in sys.argv[1:]:
        kind=nm.split('_')[1]
        d=load(nm); c=classes(d,kind); mu=np.minimum(d['mu'],65535); sd=d['sd']
        ioff=np.percentile(d['pix'],0.1)
        g={'echelle':1.1,'echelle-arc':1.1,'arc':1.2,'aurora':2.0}[kind]; r={'echelle':3.0,'echelle-arc':3.0,'arc':3.5,'aurora':5.0}[kind]
        t=time.time()
        pu=run_ls(d['pix'],False,ioff=ioff,g=g,r=r); pw=run_ls(d['pix'],True,ioff=ioff,g=g,r=r)
        np.save(f'/tmp/ex/dumps/{nm}_lsu.npy',pu); np.save(f'/tmp/ex/dumps/{nm}_lsw.npy',pw)
        print(f"\n### {nm}: numpy re-implementation of the LS member (K=6, M=9, f=1/2, ridge 2^-12), unweighted vs equations weighted by 1/(r^2 + (x-ioff)/g); {time.time()-t:.0f}s")
        print("| class | codec LS z2 | numpy LS unweighted z2 | numpy LS weighted z2 |"); print("|---|---|---|---|")
        zc=np.minimum(((d['pp'][:,:,0]-mu)/sd)**2,100); zu=np.minimum(((pu-mu)/sd)**2,100); zw=np.minimum(((pw-mu)/sd)**2,100)
        for name,k in partition(c)+[('ALL',np.ones((H,W),bool))]:
            if k.sum()<2000: continue
            k=k.copy(); k[:2]=False
            print(f"| {name} | {zc[k].mean():.3f} | {zu[k].mean():.3f} | {zw[k].mean():.3f} |")
