"""The epilogue A/B: ratio to cuBLAS (faster strict mode, same run) of the new library over the base's,
geometric means by class, per seed and over the three seeds of call 2; and by plan family.
    python3 ab_table.py"""
import csv, math, re, collections
SEEDS = ['637002266', '2436041721', '1961574108']
def g(x): return math.exp(sum(map(math.log, x)) / len(x)) if x else float('nan')
def ordinary(r): return int(r['m']) > 16 and int(r['n']) > 16 and int(r['k']) > 64
def load(who, s): return {r['index']: r for r in csv.DictReader(open('call2_%s_%s.csv' % (who, s)))}
classes = [('all', lambda r: True), ('ordinary', ordinary),
           ('ordinary, beta != 0', lambda r: ordinary(r) and float(r['beta']) != 0),
           ('ordinary, beta = 0', lambda r: ordinary(r) and float(r['beta']) == 0),
           ('beta != 0', lambda r: float(r['beta']) != 0), ('beta = 0', lambda r: float(r['beta']) == 0)]
print('| problems | seed | count | base hot | new hot | new / base hot | base cold | new cold | new / base cold |')
print('|---|---|---:|---:|---:|---:|---:|---:|---:|')
for name, sel in classes:
    for s in SEEDS + ['all three']:
        ss = SEEDS if s == 'all three' else [s]
        pairs = [(load('base', x)[i], load('new', x)[i]) for x in ss for i in load('base', x) if sel(load('base', x)[i])]
        row = [name, s, str(len(pairs))]
        for c in ['hot', 'cold']:
            a = [float(p[0]['ratio_' + c]) for p in pairs]; b = [float(p[1]['ratio_' + c]) for p in pairs]
            row += ['%.3f' % g(a), '%.3f' % g(b), '%.3f' % g([y / x for x, y in zip(a, b)])]
        if s == 'all three' or name in ('all', 'ordinary'):
            print('| ' + ' | '.join(row) + ' |')
# by the plan's first kernel, ordinary products, all three seeds
res = collections.defaultdict(list)
for s in SEEDS:
    plans, cur = {}, None
    for l in open('plans_new_%s.log' % s):
        m = re.match(r'== shape (\d+) ', l)
        if m:
            cur = m.group(1); plans[cur] = []
        elif 'device plan' in l:
            plans[cur].append(l)
    a, b = load('base', s), load('new', s)
    for i, r in a.items():
        if not ordinary(r): continue
        pl = plans.get(i, [''])[-1]
        m = re.search(r' (tiled \S+|rank-k|streaming)', pl)
        fam = m.group(1) if m else 'other'
        if 'stream-k' in pl: fam += ' stream-k'
        elif 'cluster' in pl: fam += ' cluster'
        res[(fam, 'beta != 0' if float(r['beta']) != 0 else 'beta = 0')].append(
            (float(b[i]['ratio_hot']) / float(r['ratio_hot']), float(b[i]['ratio_cold']) / float(r['ratio_cold'])))
print()
print('| plan (ordinary products, three seeds) | beta | count | new / base hot | new / base cold |')
print('|---|---|---:|---:|---:|')
for k in sorted(res):
    if len(res[k]) >= 2:
        print('| %s | %s | %d | %.3f | %.3f |' % (k[0], k[1], len(res[k]), g([x[0] for x in res[k]]), g([x[1] for x in res[k]])))
