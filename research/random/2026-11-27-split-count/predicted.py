"""The model's gain (plan_dump --costs, before over after) of each moved problem whose plans
before and after are one tiled plan, beside the measured one, for a variant.

    python3 predicted.py PLAN_DUMP VARIANT   (run in this folder; VARIANT c2, c3, c4 or g8)

--costs prices operands unpadded and aligned: the model's view of the pair of plans."""
import csv, math, subprocess, sys

from planlog import plans, tiled

dump, v = sys.argv[1], sys.argv[2]
shapes, runs = ('g8_shapes.txt', 'g8') if v == 'g8' else ('sp_shapes.txt', 'sp')
def ratios(files):
    rows = [{int(r['index']): r for r in csv.DictReader(open(f))} for f in files]
    return {i: math.exp(sum(math.log(float(x[i]['ratio_hot'])) for x in rows) / len(rows)) for i in rows[0] if all(i in x for x in rows)}
import glob
base = ratios(sorted(glob.glob(f'{runs}_base_*.csv'))); new = ratios(sorted(glob.glob(f'{runs}_{v}_*.csv')))
pb, pn = plans(f'plans_{runs}_base.log.xz'), plans(f'plans_{runs}_{v}.log.xz')
probs = [l.split('#')[0].split() for l in open(shapes) if not l.startswith('#')]
lines, keep = [], []
for i, p in enumerate(probs):
    b, a = tiled(pb.get(i, [])), tiled(pn.get(i, []))
    if not b or not a or b == a or i not in base or i not in new:
        continue
    for x in (b, a):
        lines.append(f'{p[0]} {p[1]} {p[2]} {p[3]} {p[4]} {x[0]} {x[1]} {x[3]} {x[2]}')
    keep.append(i)
out = iter(float(x) for x in subprocess.run([dump, '--costs'], input='\n'.join(lines), capture_output=True, text=True).stdout.split())
pairs = [(next(out) / next(out), new[i] / base[i]) for i in keep]
gm = lambda x: math.exp(sum(map(math.log, x)) / len(x))
print(f'{v}: {len(pairs)} problems, modelled gain {gm([p for p, _ in pairs]):.3f}, measured {gm([m for _, m in pairs]):.3f} (hot)')
