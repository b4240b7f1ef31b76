"""The tiled model's error on the plans timed here, and what a fitted correction does to
the choice among them.

    python3 residuals.py PLAN_DUMP   (run in this folder; needs numpy)

Every (problem, plan) timed with a single tiled plan: its measured hot time against
plan_dump --costs. A correction, us = model + c0 + c1 waves + c2 [workspace] + c3 slices
[workspace], is fitted on this folder's sp runs and applied to the moved problems of
../2026-11-27-unaligned-clusters and to this folder's g8 runs. regret: the time of the plan
the model picks among those timed for a problem over the fastest of them."""
import csv, glob, math, subprocess, sys

import numpy as np

from planlog import plans, tiled

DUMP = sys.argv[1]
L1 = [0, 0, 132, 117, 120, 110, 102, 105, 120]  # blocks resident in clusters of 0 to 8 (the H100's counts)
CLUSTER = {'256x128x16': L1, '256x128x8': L1, '128x256x8': L1, '128x128x16': L1,
           '128x128x8': [0, 0, 264, 237, 248, 235, 234, 224, 240], '128x64x8': [0, 0, 528, 489, 496, 470, 474, 483, 496],
           '64x64x8': [0, 0, 528, 489, 496, 470, 474, 483, 496], '64x64x16': [0, 0, 528, 489, 496, 470, 474, 483, 496],
           '32x32x8': [0, 0, 1056, 981, 992, 965, 978, 973, 992]}
BPS = {'256x128x16': 1, '256x128x8': 1, '128x256x8': 1, '128x128x8': 2, '128x128x16': 1, '128x64x8': 4,
       '64x64x8': 4, '64x64x16': 4, '32x32x8': 16, '64x128x8': 4}


def gm(x):
    return math.exp(sum(map(math.log, x)) / len(x)) if x else float('nan')


def timed(shapes, libs):
    """[(problem index, measured us, model us, features)] of every (problem, plan) timed."""
    probs = [l.split('#')[0].split() for l in open(shapes) if not l.startswith('#')]
    seen = {}
    for log, files in libs:
        plan = plans(log)
        rows = [{int(r['index']): r for r in csv.DictReader(open(f))} for f in files]
        for i in range(len(probs)):
            t = tiled(plan.get(i, []))
            if t and all(i in r for r in rows):
                seen.setdefault((i, t), []).append(gm([float(r[i]['tgemm_hot_us']) for r in rows]))
    items = list(seen.items())
    text = '\n'.join(f"{' '.join(probs[i][:5])} {t[0]} {t[1]} {t[3]} {t[2]}" for (i, t), _ in items)
    costs = subprocess.run([DUMP, '--costs'], input=text, capture_output=True, text=True).stdout.split()
    out = []
    for ((i, (fam, spl, form, _)), us), c in zip(items, costs):
        m, n = int(probs[i][0]), int(probs[i][1])
        bm, bn, _ = map(int, fam.split('x'))
        spl = int(spl)
        blocks = math.ceil(m / bm) * math.ceil(n / bn) * spl
        if form == 'cluster':
            waves = math.ceil(blocks / CLUSTER[fam][spl])
        else:
            waves = math.ceil(math.ceil(blocks / 132) / BPS[fam])
        ws = 1.0 if form == 'workspace' else 0.0
        out.append((i, sum(us) / len(us), float(c) * 1e6, np.array([1.0, waves, ws, ws * spl])))
    return out


def report(name, rows, coef):
    meas = np.array([r[1] for r in rows])
    model = np.array([r[2] for r in rows])
    fit = model + np.array([r[3] @ coef for r in rows])
    def regret(pred):
        by = {}
        for r, p in zip(rows, pred):
            by.setdefault(r[0], []).append((p, r[1]))
        reg = [min(l)[1] / min(x[1] for x in l) for l in by.values() if len(l) >= 2]
        return f'{len(reg)} problems, regret {gm(reg):.3f}, {sum(x > 1.03 for x in reg)} over 3%'
    print(f'{name}: log-rms model {np.sqrt(np.mean(np.log(meas / model) ** 2)):.3f}, fitted '
          f'{np.sqrt(np.mean(np.log(meas / fit) ** 2)):.3f}; model: {regret(model)}; fitted: {regret(fit)}')


sp = timed('sp_shapes.txt', [(f'plans_sp_{v}.log.xz', sorted(glob.glob(f'sp_{v}_*.csv'))) for v in ('base', 'c2', 'c3', 'c4')])
X = np.array([r[3] for r in sp])
coef, *_ = np.linalg.lstsq(X, np.array([r[1] - r[2] for r in sp]), rcond=None)
print('fitted on the sp runs: us = model + %.2f + %.2f waves + %.2f [workspace] + %.3f slices [workspace]' % tuple(coef))
report('sp (in sample)', sp, coef)
U = '../2026-11-27-unaligned-clusters/'
report('unaligned-clusters moves', timed(U + 'shapes.txt', [(U + 'plans_mv_base.log.xz', [U + 'mv_base_1.csv', U + 'mv_base_4.csv']),
                                                           (U + 'plans_mv_new.log.xz', [U + 'mv_new_2.csv', U + 'mv_new_3.csv'])]), coef)
report('g8 moves', timed('g8_shapes.txt', [('plans_g8_base.log.xz', ['g8_base_1.csv', 'g8_base_4.csv']),
                                           ('plans_g8_g8.log.xz', ['g8_g8_2.csv', 'g8_g8_3.csv'])]), coef)
