import sys,re
def load(t):
    d={}
    for l in open(f'/tmp/r40runs/{t}.sizes'):
        a=l.split(); d[a[0]]=(int(a[1]),a[2])
    return d
def held(n):
    m=re.search(r'_s(\d+)_',n); return m and int(m.group(1))>=11
b=load('base')
for t in sys.argv[1:]:
    x=load(t); bad=[k for k in x if x[k][1]!='ok']
    rb=[];rh=[];tot=0
    for k in sorted(b):
        r=x[k][0]/b[k][0]-1; (rh if held(k) else rb).append((r,k)); 
    mb=sum(r for r,_ in rb)/len(rb)*100; mh=sum(r for r,_ in rh)/len(rh)*100
    al=rb+rh
    print(f"{t:24s} bench {mb:+.4f}% heldout {mh:+.4f}%  worst {max(al)[1]} {max(al)[0]*100:+.3f}% best {min(al)[1]} {min(al)[0]*100:+.3f}%  bytes {sum(x[k][0] for k in x)-sum(b[k][0] for k in b):+d} {'BAD '+str(bad) if bad else 'all-rt-ok'}")
    if '-v' in sys.argv[0:1]: pass
