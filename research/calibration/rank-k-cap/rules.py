"""Rank-k against the tiled plans on the mid-K sets: the models' times against the
measured and the choices each rule (K cap, factor on the tiled model) makes.
Run from this folder after `make build/bench/plan_dump` (the checkout's model)."""
import csv,math,os,re,subprocess
os.chdir(os.path.dirname(os.path.abspath(__file__)))
def load(f): return {int(r['index']):r for r in csv.DictReader(open(f))}
def gm(x): return math.exp(sum(map(math.log,x))/len(x)) if x else float('nan')
PD=os.path.join(os.path.dirname(os.path.abspath(__file__)),'../../../build/bench/plan_dump')
def costs(lines):
    o=subprocess.run([PD,'--costs'],input='\n'.join(lines)+'\n',capture_output=True,text=True)
    assert o.returncode==0,o.stderr
    return list(map(float,o.stdout.split()))
def tiled_line(r,p):
    mm=re.search(r'tiled (\S+) (?:\d+x\d+x\d+ )?split(?:-k)?=(\d+) \(?(\w+)\)? k[-_]chunk=(\d+)',p)
    return f"{r['m']} {r['n']} {r['k']} {r['ta']} {r['tb']} {mm.group(1)} {mm.group(2)} {mm.group(4)} {mm.group(3)}" if mm else None
# set 1: rkf (H100 today): tiled=default, rk forced
D=[load('h100_mid_k_def_1.csv'),load('h100_mid_k_def_4.csv')];R=[load('h100_mid_k_rk_2.csv'),load('h100_mid_k_rk_3.csv')]
plans={};cur=None
for l in open('h100_mid_k_plans_default.log'):
    m=re.match(r'== shape (\d+)',l)
    if m: cur=int(m.group(1)); continue
    if 'device plan' in l: plans.setdefault(cur,[]).append(l.split('device plan',1)[1].strip())
S=[]
for i in sorted(D[0]):
    r=D[0][i]; p=plans[i][-1]
    tl=tiled_line(r,p) if 'stream-k' not in p else None
    S.append(dict(set='rkf',r=r,tl=tl,trk=gm([float(x[i]['tgemm_hot_us']) for x in R]),tt=gm([float(x[i]['tgemm_hot_us']) for x in D])))
# set 2: cap160 (H100 session 15): base=rank-k, new=tiled
B=load('h100_cap160_base.csv');N=load('h100_cap160_new.csv')
cm=[l.split('|')[-1] for l in open('shapes_k_over_160.txt') if not l.startswith('#')]
for i in sorted(B):
    r=B[i]; p=cm[i]
    tl=tiled_line(r,p) if 'stream-k' not in p else None
    # cuBLAS-normalised: use ratio to cublas to cancel drift
    S.append(dict(set='cap',r=r,tl=tl,trk=1/float(B[i]['ratio_hot']),tt=1/float(N[i]['ratio_hot'])))
rk=costs([f"{s['r']['m']} {s['r']['n']} {s['r']['k']} {s['r']['ta']} {s['r']['tb']} rank-k 1 {s['r']['k']} none" for s in S])
for s,c in zip(S,rk):
    m,n=int(s['r']['m']),int(s['r']['n'])
    s['mrk']=c+(m*n*4/2.88e12 if float(s['r']['beta'])!=0 else 0)
idx=[j for j,s in enumerate(S) if s['tl']]
tc=costs([S[j]['tl'] for j in idx])
for j,c in zip(idx,tc):
    m,n=int(S[j]['r']['m']),int(S[j]['r']['n'])
    S[j]['mt']=c
import itertools
def evaluate(rule,name):
    out=[]
    for st in ('rkf','cap'):
        ss=[s for s in S if s['set']==st and 'mt' in s]
        ch=[ (s['trk'] if rule(s) else s['tt'])/min(s['trk'],s['tt']) for s in ss]
        ch_def=[ (s['trk'] if rule(s) else s['tt'])/s['tt'] for s in ss]
        nrk=sum(1 for s in ss if rule(s))
        out.append(f"{st}: n={len(ss)} rk={nrk} loss_vs_best={gm(ch):.3f} time_vs_tiled={gm(ch_def):.3f}")
    print(f"{name:40s}", ' | '.join(out))
for cap in (160,300,400,512):
  for share in (1/0.9,1.0,0.95,0.9):
    evaluate(lambda s,cap=cap,sh=share: int(s['r']['k'])<=cap and s['mrk']*sh<s['mt'], f"cap {cap} tiled share {share:.3f}")
print()
for s in S:
    if s['set']!='rkf' or 'mt' not in s: continue
    k=int(s['r']['k'])
    if k<=512 and s['mrk']<1.1*s['mt']:
        print(k, s['r']['m'], s['r']['n'], s['r']['ta']+s['r']['tb'], s['r']['beta'], f"mrk/mt {s['mrk']/s['mt']:.3f} meas rk/t {s['trk']/s['tt']:.3f}", s['tl'].split()[5])
import statistics
for lo,hi in ((0,160),(161,300),(301,512),(513,9999)):
    ss=[s for s in S if s['set']=='rkf' and 'mt' in s and lo<=int(s['r']['k'])<=hi]
    print(lo,hi,len(ss),'tiled model/meas',round(gm([s['mt']*1e6/s['tt'] for s in ss]),3),'rk model/meas',round(gm([s['mrk']*1e6/s['trk'] for s in ss]),3))
