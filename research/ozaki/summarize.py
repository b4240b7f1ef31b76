#!/usr/bin/env python3
"""Compact summary of results.md: per shape and case, strict FP32 (FMA) errors
and, per scaling, the smallest N (of 6..10) whose max and normwise errors are
both <= strict FMA's, and the smallest N the bound certifies (2..14)."""
import re, sys
txt = open(sys.argv[1] if len(sys.argv) > 1 else 'results.md').read()
secs = re.split(r'^### ', txt, flags=re.M)[1:]
print('| shape | case | strict FMA max / normwise | fast: N meas / cert | fast-cs: N meas / cert | accurate: N meas / cert | kbal+accurate: N meas / cert | accurate N=8 max / normwise |')
print('|---|---|---|---|---|---|---|---|')
for s in secs:
    head = s.split('\n', 1)[0]
    shape, case = head.split(', ', 1)
    case = re.sub(r' \(seed \d+\)', '', case)
    rows = {}
    for m in re.finditer(r'^\| (strict FP32 \w+|ozaki2 \S+ N=\d+) \| (\S+) \| (\S+) \|', s, re.M):
        rows[m.group(1)] = (float(m.group(2)), float(m.group(3)), m.group(2), m.group(3))
    cert = dict(re.findall(r' (fast|fast-cs|accurate|kbal\+accurate) (>?\d+);', s))
    st = rows['strict FP32 FMA']
    out = []
    for mode in ('fast', 'fast-cs', 'accurate', 'kbal+accurate'):
        n = next((N for N in range(6, 11) if rows[f'ozaki2 {mode} N={N}'][0] <= st[0] and rows[f'ozaki2 {mode} N={N}'][1] <= st[1]), None)
        out.append(f'{n if n else ">10"} / {cert.get(mode, "?")}')
    a8 = rows['ozaki2 accurate N=8']
    print(f'| {shape} | {case} | {st[2]} / {st[3]} | ' + ' | '.join(out) + f' | {a8[2]} / {a8[3]} |')
