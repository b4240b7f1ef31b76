#!/usr/bin/env python3
"""Register-bank pressure of each kernel's main loop, from its SASS.

    cuobjdump -sass build/obj/kernels/tiled_256x128x16.o | python3 bench/sass_banks.py
    python3 bench/sass_banks.py SASS.txt [SASS.txt ...]

For every function: its instructions, its main loop (the narrowest loop,
between a backward branch and its target, that holds at least 80% of the
FFMAs of the loop holding the most), that loop's FFMAs, and how many of them read two register operands
of the same parity without the reuse cache (`.reuse`) supplying one. The
register file has two banks by register parity, so such an FFMA can stall
at dispatch. This is a proxy, not the hardware's exact rule, but on the H100
it told the slow kernels apart: 256x128x16's cluster kernels had 0.52-0.57
of their FFMAs so, the plain ones 0.18-0.19, and ncu measured 0.53 against
0.10 dispatch stalls per issued instruction (docs/notes/history-tiled.md,
"16384^3 and the cluster form's register allocation"). A family's kernels
should sit close together; one far above its siblings has drawn an unlucky
register allocation.
"""
import re
import sys

INSN = re.compile(r'^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;')
BRANCH = re.compile(r'\bBRA\b.*?0x([0-9a-f]+)')
REG = re.compile(r'\bR(\d+)\b')


def functions(text):
    """(name, [(offset, instruction)]) for each function of a cuobjdump -sass listing."""
    name, body = None, []
    for line in text.splitlines():
        if 'Function :' in line:
            if name is not None:
                yield name, body
            name, body = line.split('Function :', 1)[1].strip(), []
            continue
        m = INSN.match(line)
        if m and name is not None:
            body.append((int(m.group(1), 16), m.group(2)))
    if name is not None:
        yield name, body


def short_name(mangled):
    """sgemm_tiled: its tile shape and template flags (sgemm_streamk the same,
    after "streamk"); others: the function's
    own name (the last of the mangled nested names) and its template arguments
    as mangled, shortened."""
    # TileShape<TileBMxBNxBK> (the named shapes of src/kernels/tiled/shapes.cuh).
    m = re.search(r'TileShapeINS0_\d+Tile(\d+)x(\d+)x(\d+)EEE((?:Lb[01]E)+)', mangled)
    if not m:
        pos, name = 3, mangled
        while mangled.startswith('_ZN') and pos < len(mangled) and mangled[pos].isdigit():
            digits = re.match(r'\d+', mangled[pos:]).group(0)
            start = pos + len(digits)
            name, pos = mangled[start:start + int(digits)], start + int(digits)
        args = mangled[pos:] if name != mangled else ''
        return (name + ' ' + args).strip()[:30]
    flags = ''.join(re.findall(r'Lb([01])E', m.group(4)))
    kind = 'streamk ' if 'sgemm_streamk' in mangled else ''
    return '%s%sx%sx%s %s' % (kind, m.group(1), m.group(2), m.group(3), flags)


def same_bank(instruction):
    """Whether an FFMA reads two registers of one parity, neither marked .reuse."""
    operands = [o.strip() for o in instruction.split(None, 1)[1].split(',')][1:]
    parities = [int(REG.search(o).group(1)) % 2 for o in operands if REG.search(o) and '.reuse' not in o]
    return parities.count(0) >= 2 or parities.count(1) >= 2


def main():
    paths = sys.argv[1:]
    texts = [open(p).read() for p in paths] if paths else [sys.stdin.read()]
    print('%-30s %7s %6s %6s %9s %9s' % ('kernel (TA TB aligned cluster)', 'insns', 'loop', 'FFMA',
                                         'same-bank', 'fraction'))
    for text in texts:
        for name, body in functions(text):
            loops = [(int(m.group(1), 16), off) for off, ins in body
                     for m in [BRANCH.search(ins)] if m and int(m.group(1), 16) < off]
            if not loops:
                continue
            # The main loop: the narrowest loop holding nearly all the FFMAs
            # of the widest (stream-K kernels wrap theirs in a loop over parts).
            def ffmas(loop):
                return sum(1 for off, ins in body if loop[0] <= off <= loop[1] and ins.startswith('FFMA'))
            most = max(ffmas(l) for l in loops)
            start, end = min((l for l in loops if ffmas(l) >= 0.8 * most), key=lambda l: l[1] - l[0])
            ffma = [ins for off, ins in body if start <= off <= end and ins.startswith('FFMA')]
            clash = sum(1 for ins in ffma if same_bank(ins))
            loop_insns = sum(1 for off, _ in body if start <= off <= end)
            print('%-30s %7d %6d %6d %9d %9.2f' % (short_name(name), len(body), loop_insns, len(ffma), clash,
                                                   clash / len(ffma) if ffma else 0.0))


if __name__ == '__main__':
    main()
