#!/usr/bin/env python3
"""Where a kernel's warps stall, instruction by instruction, from ncu's PC sampling.

    ncu --set full -k regex:NAME -c 1 -o REPORT PROGRAM ...
    ncu -i REPORT.ncu-rep --page source --csv --print-source sass > SASS.csv
    python3 bench/ncu_stalls.py SASS.csv [--top N]      (SASS.csv may be gzipped)

For each kernel in the file it prints:
  - the warp-state samples of every stall reason, summed over all of the
    kernel's instructions;
  - its main loop, taken as the instructions executed at least 90% as often
    as the most executed one: how many there are and how many are FFMA;
  - for each of the largest reasons, the N instructions with the most
    samples of it. An instruction is shown by its place in the main loop
    (+i), or before it (-i) or after it (>i), and by its SASS.

tests/gpu-session.sh's profile step runs it on tgemm's large-square kernel
and on cuBLAS's. docs/notes/history-tiled.md ("Where the large-square kernel loses
its time") reads such a run.
"""
import argparse
import collections
import csv
import gzip
import sys

# Warp states that are not stalls: the warp issued, or was ready while
# another warp issued. (The "(Not Issued)" copies of each reason are left
# out where the reasons are read.)
SKIP = ('stall_selected', 'stall_not_selected')


def number(text):
    text = text.replace(',', '').strip()
    if text in ('', '-'):
        return 0.0
    try:
        return float(text)
    except ValueError:
        return 0.0


def kernels(rows):
    """(name, header, [instruction row dicts]) per kernel of a source-page CSV."""
    name, header, body = None, None, []
    for row in rows:
        if not row:
            continue
        if row[0] == 'Kernel Name':
            if name is not None:
                yield name, header, body
            name, header, body = row[1] if len(row) > 1 else '?', None, []
        elif row[0] == 'Address':
            header = row
        elif header is not None and row[0].startswith('0x'):
            body.append(dict(zip(header, row)))
    if name is not None and header is not None:
        yield name, header, body


def opcode(sass):
    words = sass.split()
    if words and words[0].startswith('@'):
        words = words[1:]
    return words[0].split('.')[0] if words else ''


def report(name, header, body, top):
    print(f'== {name[:160]}')
    if not body:
        print('   (no instructions)')
        return
    reasons = [c for c in header if c.startswith('stall_') and '(Not Issued)' not in c]
    executed = [number(d.get('Instructions Executed', '')) for d in body]
    most = max(executed)
    loop = [i for i, e in enumerate(executed) if most > 0 and e >= 0.9 * most]
    first, last = (loop[0], loop[-1]) if loop else (0, -1)
    ffma = sum(1 for i in loop if opcode(body[i]['Source']) == 'FFMA')
    totals = collections.Counter()
    for d in body:
        for c in reasons:
            totals[c] += number(d[c])
    print(f'   instructions {len(body)}; main loop: {len(loop)} instructions (+0 to +{last - first}), '
          f'{ffma} FFMA, each executed ~{most:.0f} times')
    print('   samples per reason: ' + ', '.join(f'{c[6:]} {totals[c]:.0f}' for c, _ in totals.most_common()
                                            if totals[c] > 0))

    def place(i):
        if i < first:
            return f'-{first - i}'
        if i > last:
            return f'>{i - last}'
        return f'+{i - first}'

    stalls = [c for c, v in totals.most_common() if c not in SKIP and v > 0]
    for c in stalls[:6]:
        hot = sorted(range(len(body)), key=lambda i: -number(body[i][c]))[:top]
        share = sum(number(body[i][c]) for i in hot)
        print(f'   {c[6:]}: {totals[c]:.0f} samples, {share:.0f} on these {len(hot)}:')
        for i in hot:
            if number(body[i][c]) <= 0:
                break
            print(f'      {place(i):>6s} {number(body[i][c]):7.0f}  {body[i]["Source"].strip()[:70]}')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('csv', nargs='+', help='ncu --page source --csv --print-source sass output')
    ap.add_argument('--top', type=int, default=6, help='instructions shown per stall reason')
    args = ap.parse_args()
    for path in args.csv:
        opener = gzip.open if path.endswith('.gz') else open
        with opener(path, 'rt', newline='') as f:
            found = False
            for name, header, body in kernels(csv.reader(f)):
                found = True
                report(name, header, body, args.top)
            if not found:
                print(f'{path}: no kernel found (is it ncu --page source --csv --print-source sass output?)',
                      file=sys.stderr)
                return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
