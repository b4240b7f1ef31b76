#!/usr/bin/env python3
"""Whether the tiled families' compiled kernels fit the residency the dispatcher plans for.

    python3 bench/residency.py FAMILIES PTXAS_LOG_DIR

FAMILIES: `plan_dump --families` (a file, or - for standard input), one
line a tiled family: its name, the threads and shared bytes of its plain
kernels (the kernel registry's), the blocks an SM the dispatcher's model
plans it at (src/dispatch/factors.cpp), and the most blocks an SM holds in
clusters by the device's counts (0: no cluster form). What an SM holds is set by
the compiled kernels' registers (ptxas's report, next to each family's
object: PTXAS_LOG_DIR/tiled_<name>.ptxas.log) with those threads and shared
bytes. Each plain kernel (sgemm_tiled without the cluster form,
sgemm_streamk) is checked against the H100's limits: 65,536 registers an
SM allocated to warps in units of 256, 2,048 threads, 32 blocks, 228 KiB
of shared memory with 1 KiB reserved a block. The cluster capacity is
measured on the device by the occupancy API before the first launch, on
one cluster kernel (sgemm_tiled<T, false, false, true, true>: NN,
aligned); every cluster kernel of the family (unaligned operands or C
among them) must fit that many blocks an SM by its registers, or the
capacity would be overstated for it.

Prints one line a family, "ok" or "short: ..." naming the kernel and the
blocks it leaves; exit status 1 if any family falls short, 2 on bad input.
"""
import math
import re
import sys

REGS_PER_SM = 65536
REG_UNIT = 256  # registers are allocated to a warp in units of this many
THREADS_PER_SM = 2048
BLOCKS_PER_SM = 32
SMEM_PER_SM = 228 * 1024
SMEM_RESERVED_PER_BLOCK = 1024


def families(text):
    """{family: (threads, shared bytes, planned blocks an SM, blocks an SM in
    clusters)} from plan_dump --families."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) != 5:
            raise ValueError("not a family line: %r" % line)
        out[f[0]] = (int(f[1]), int(f[2]), int(f[3]), int(f[4]))
    return out


def kernels(log_text):
    """[(entry name, registers)] of the sm_90a kernels in a ptxas report."""
    out = []
    for part in re.split(r"ptxas info\s*: Compiling entry function '", log_text)[1:]:
        name = part.split("'")[0]
        if "for 'sm_90a'" not in part.split("\n")[0]:
            continue
        m = re.search(r"Used (\d+) registers", part)
        if m:
            out.append((name, int(m.group(1))))
    return out


def is_plain(name):
    """A kernel whose residency the model assumes: stream-K, or sgemm_tiled
    without the cluster form (its fourth bool template argument)."""
    if "sgemm_streamk" in name:
        return True
    bools = re.findall(r"Lb([01])E", name)
    return "sgemm_tiled" in name and len(bools) >= 4 and bools[3] == "0"


def is_cluster(name):
    """sgemm_tiled in the cluster form (its fourth bool template argument)."""
    bools = re.findall(r"Lb([01])E", name)
    return "sgemm_tiled" in name and len(bools) >= 4 and bools[3] == "1"


def cluster_short(family, ks, threads, per_sm):
    """The lines naming each cluster kernel of `ks` whose registers and
    threads fit fewer than per_sm blocks an SM (the cluster capacity's)."""
    return ["%s short: cluster kernel %s uses %d registers (%d threads): %d blocks an SM, %d in clusters"
            % (family, n, r, threads, blocks_fitting(r, threads, 0), per_sm)
            for n, r in ks if is_cluster(n) and blocks_fitting(r, threads, 0) < per_sm]


def blocks_fitting(registers, threads, smem):
    warps = math.ceil(threads / 32)
    per_warp = math.ceil(registers * 32 / REG_UNIT) * REG_UNIT
    by_regs = REGS_PER_SM // (per_warp * warps)
    by_threads = THREADS_PER_SM // threads
    by_smem = SMEM_PER_SM // (smem + SMEM_RESERVED_PER_BLOCK)
    return min(by_regs, by_threads, by_smem, BLOCKS_PER_SM)


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        table = families(sys.stdin.read() if sys.argv[1] == "-" else open(sys.argv[1]).read())
    except (OSError, ValueError) as e:
        print("bad family table: %s" % e)
        return 2
    if not table:
        print("no families in the table")
        return 2
    short = 0
    for family in sorted(table):
        threads, smem, planned, in_clusters = table[family]
        try:
            every = kernels(open("%s/tiled_%s.ptxas.log" % (sys.argv[2], family)).read())
        except OSError as e:
            print("%s: no ptxas report: %s" % (family, e))
            return 2
        ks = [(n, r) for n, r in every if is_plain(n)]
        if not ks:
            print("%s: no plain kernel in its ptxas report" % family)
            return 2
        name, regs = max(ks, key=lambda k: k[1])
        fits = blocks_fitting(regs, threads, smem)
        for line in cluster_short(family, every, threads, in_clusters):
            short += 1
            print(line)
        if fits < planned:
            short += 1
            print("%s short: %s uses %d registers (%d threads, %d shared bytes): %d blocks an SM, planned %d"
                  % (family, name, regs, threads, smem, fits, planned))
        else:
            print("%s ok: at most %d registers (%d threads, %d shared bytes): %d blocks an SM, planned %d"
                  % (family, regs, threads, smem, fits, planned))
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main())
