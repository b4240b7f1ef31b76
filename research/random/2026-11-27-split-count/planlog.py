"""Plan lines of a `TGEMM_VERBOSE=2 bench_random --plans` log (xz), for predicted.py and residuals.py."""
import lzma
import re


def plans(path):
    """{problem index: [its plan lines]}."""
    out, cur = {}, None
    for line in lzma.open(path, 'rt'):
        m = re.match(r'== shape (\d+) ', line)
        if m:
            cur = int(m.group(1))
            out[cur] = []
        elif 'device plan' in line and cur is not None:
            out[cur].append(line)
    return out


def tiled(lines):
    """(family, splits, form, chunk) of a call planned as one tiled plan (no stream-K), else None."""
    if len(lines) != 1 or 'stream-k' in lines[0]:
        return None
    m = re.search(r' tiled (\S+) split-k=(\d+) \((\w+)\) k-chunk=(\d+)', lines[0])
    return m.groups() if m else None
