"""Two libraries' bench_random CSVs of the same shapes, ratio to cuBLAS in each run.

    python3 ab_table.py A1.csv[,A2.csv...] B1.csv[,B2.csv...] [-v]

Problems present in every CSV; geometric means of the runs of each side;
B/A is the new (B) over the old (A); tA/tB tgemm's own time (moves with the
GPU's clocks between runs, hence the ratios). -v lists every problem.
"""
import csv,sys,math,collections
def load(f):
    return {int(r['index']):r for r in csv.DictReader(open(f))}
def gm(x): return math.exp(sum(map(math.log,x))/len(x)) if x else float('nan')
A=[load(f) for f in sys.argv[1].split(',')]; B=[load(f) for f in sys.argv[2].split(',')]
rows=[]
for i in [i for i in A[0] if all(i in x for x in A+B)]:
    ra=[float(a[i]['ratio_hot']) for a in A]; rb=[float(b[i]['ratio_hot']) for b in B]
    ca=[float(a[i]['ratio_cold']) for a in A]; cb=[float(b[i]['ratio_cold']) for b in B]
    ta=[float(a[i]['tgemm_hot_us']) for a in A]; tb=[float(b[i]['tgemm_hot_us']) for b in B]
    r=A[0][i]
    rows.append(dict(i=i,beta=r['beta'],m=int(r['m']),n=int(r['n']),k=int(r['k']),op=r['ta']+r['tb'],ha=gm(ra),hb=gm(rb),ca=gm(ca),cb=gm(cb),ta=gm(ta),tb=gm(tb)))
def summ(name,sel):
    if not sel: return
    print(f"{name:28s} {len(sel):4d} A hot {gm([r['ha'] for r in sel]):.3f} B hot {gm([r['hb'] for r in sel]):.3f} B/A {gm([r['hb']/r['ha'] for r in sel]):.3f} | A cold {gm([r['ca'] for r in sel]):.3f} B cold {gm([r['cb'] for r in sel]):.3f} B/A {gm([r['cb']/r['ca'] for r in sel]):.3f} | tA/tB {gm([r['ta']/r['tb'] for r in sel]):.3f}")
summ('all',rows)
summ('beta=0',[r for r in rows if float(r['beta'])==0])
summ('beta!=0',[r for r in rows if float(r['beta'])!=0])
summ('ordinary',[r for r in rows if r['m']>16 and r['n']>16 and r['k']>64])
summ('>=20us',[r for r in rows if r['ta']>=20])
summ('<20us',[r for r in rows if r['ta']<20])
if '-v' in sys.argv:
    for r in sorted(rows,key=lambda r:r['hb']/r['ha']):
        print(f"{r['i']:3d} {r['m']}x{r['n']}x{r['k']} {r['op']} b={r['beta']} tA {r['ta']:.1f} tB {r['tb']:.1f} hot B/A {r['hb']/r['ha']:.3f} cold {r['cb']/r['ca']:.3f}")
