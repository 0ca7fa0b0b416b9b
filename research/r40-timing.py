import subprocess,time,statistics,sys,os
reps=int(sys.argv[1]) if len(sys.argv)>1 else 9
frames=['sim_echelle_s9_l1','sim_aurora_s1_l1']
arms={'A base':('/tmp/r40base/aurorapack','/tmp/r40runs/base/%s.aurp',{}),
      'B r40 sign+raw':('/tmp/r40/build/bin/aurorapack','/tmp/r40runs/fin/%s.aurp',{'R40_SV':'2'}),
      'S r40 sign only':('/tmp/r40/build/bin/aurorapack','/tmp/r40runs/fins/%s.aurp',{'R40_SV':'2'}),
      'B9 r40 integer form':('/tmp/r40/build/bin/aurorapack','/tmp/r40runs/v9r/%s.aurp',{'R40_SV':'9'}),
      'C r40 bin, base stream':('/tmp/r40/build/bin/aurorapack','/tmp/r40runs/base/%s.aurp',{'R40_SV':'2'})}
for thr in ([],) if os.environ.get('ONLY2') else (['--threads','1'],[]):
  for f in frames:
    res={k:[] for k in arms}; cpu={k:[] for k in arms}
    for r in range(reps):
        for k,(binp,st,env) in arms.items():
            e=dict(os.environ); e.update(env)
            t=time.perf_counter()
            p=subprocess.Popen([binp,'unpack','-q','-f']+thr+['-o','/tmp/r40runs/tt.fits',st%f],env=e)
            _,_,ru=os.wait4(p.pid,0)
            w=time.perf_counter()-t
            res[k].append(w); cpu[k].append(ru.ru_utime+ru.ru_stime)
    a=statistics.median(res['A base']); ac=statistics.median(cpu['A base'])
    for k,v in res.items():
        m=statistics.median(v); mc=statistics.median(cpu[k])
        print(f"{f:18s} thr={'1' if thr else 'def'} {k:24s} wall median {m*1000:6.1f} ms ({m/a*100-100:+5.1f}%) min {min(v)*1000:6.1f} | cpu median {mc*1000:6.1f} ms ({mc/ac*100-100:+5.1f}%) min {min(cpu[k])*1000:6.1f}",flush=True)
