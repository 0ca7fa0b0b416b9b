from load import *
import sys
for nm in sys.argv[1:]:
    d=load(nm)
    x=d['pix'].astype(float); mu=d['mu']; sd=d['sd']; bits=d['bits']; fb=d['fb']
    ex=bits-fb
    o=d['pred']-mu
    z=o/sd
    g_mu=gauss_bits(x,mu,sd); g_pr=gauss_bits(x,d['pred'].astype(float),sd)
    print(f"== {nm}: codec {bits.sum()/8:.0f} B floor {fb.sum()/8:.0f} B excess {ex.sum()/8:.0f} B ({ex.sum()/bits.sum()*100:.2f}% of stream); gauss(x|mu,sd) {g_mu.sum()/8:.0f} gauss(x|pred,sd) {g_pr.sum()/8:.0f}")
    print(f"  mean z^2 {np.mean(z**2):.3f}  Lquad {0.7213*np.sum(np.minimum(z**2,1e6))/8:.0f} B  Llog {0.5*np.sum(np.log2(1+z**2))/8:.0f} B")
    edges=[0,0.25,0.5,1,2,4,8,1e9]
    az=np.abs(z)
    for lo,hi in zip(edges[:-1],edges[1:]):
        k=(az>=lo)&(az<hi)
        print(f"  |z| [{lo},{hi}): pix {k.sum():8d} excess {ex[k].sum()/8:9.0f} B  bits/pix {bits[k].mean() if k.any() else 0:.3f} fb/pix {fb[k].mean() if k.any() else 0:.3f}")
    light=d['lam']/1.1
    print('  sd quantiles', np.percentile(sd,[0,10,50,90,99,100]).round(2), ' mu q', np.percentile(mu,[0,10,50,90,99,100]).round(0))
