#!/bin/sh
# The shape of src/, from its files alone (no build needed):
#  - every #include "..." points down the layers
#      core < runtime < kernels < dispatch < driver < api < blas
#    (a file may include its own folder; kernels may include only core and
#    kernels, runtime only core and runtime);
#  - no cycle among the files' includes;
#  - no file in src over 700 lines;
#  - no comment in src carries a date (YYYY-MM-DD) or cites PERF.md: figures
#    and history belong in commit messages and docs/notes.
# Prints the layer graph (which folder includes which, with counts) and the
# five largest files, then one "[       OK ]" or "[  FAILED  ]" line per
# rule, each failure with its offending lines.
#
#   tests/check-layers.sh [SRC_DIR]   (default: src next to this script)
set -eu
here=$(dirname "$0")
exec python3 - "${1:-$here/../src}" <<'PY'
import os
import re
import sys

src = os.path.normpath(sys.argv[1])
LAYERS = ["core", "runtime", "kernels", "dispatch", "driver", "api", "blas"]
RANK = {name: i for i, name in enumerate(LAYERS)}
# Folders a layer may include besides its own, where the order alone
# would allow more: kernels are device code and launchers only.
ONLY = {"kernels": {"core", "kernels"}, "runtime": {"core", "runtime"}}
MAX_LINES = 700
SOURCE = (".c", ".cpp", ".cu", ".cuh", ".h", ".hpp", ".def", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
DATE = re.compile(r"\b(19|20)\d\d-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b")

files = []
for root, _, names in os.walk(src):
    for n in names:
        if n.endswith(SOURCE):
            files.append(os.path.relpath(os.path.join(root, n), src))
files.sort()


def layer(rel):
    top = rel.split(os.sep)[0]
    return top if top in RANK else None


def resolve(rel, name):
    """The file an include names, relative to src: beside the includer
    first, then from src (the build's -Isrc); None if outside src."""
    for cand in (os.path.join(os.path.dirname(rel), name), name):
        cand = os.path.normpath(cand)
        if os.path.isfile(os.path.join(src, cand)):
            return cand
    return None


def comments(text):
    """(line number, text) of every comment, skipping string literals."""
    out, i, line, n = [], 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k, part in enumerate(text[i:j].split("\n")):
                out.append((line + k, part))
            line += text.count("\n", i, j)
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return out


edges = {f: [] for f in files}
graph = {}
up, lengths, dated = [], {}, []
for f in files:
    text = open(os.path.join(src, f), encoding="utf-8", errors="replace").read()
    lengths[f] = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    for no, l in enumerate(text.split("\n"), 1):
        m = INCLUDE.match(l)
        if not m:
            continue
        to = resolve(f, m.group(1))
        if to is None:
            continue
        edges[f].append(to)
        a, b = layer(f), layer(to)
        if a is None or b is None:
            continue
        graph[(a, b)] = graph.get((a, b), 0) + 1
        if a == b:
            continue
        allowed = RANK[b] < RANK[a] and b in ONLY.get(a, {b})
        if not allowed:
            up.append(f"  src/{f}:{no}: {a} includes {b} (\"{m.group(1)}\")")
    for no, c in comments(text):
        if DATE.search(c) or "PERF.md" in c:
            dated.append(f"  src/{f}:{no}: {c.strip()[:100]}")

# Cycles: a depth-first walk; each back edge closes one cycle.
cycles, state = [], {}


def walk(f, path):
    state[f] = 1
    path.append(f)
    for to in edges.get(f, []):
        if state.get(to) == 1:
            cyc = path[path.index(to):] + [to]
            cycles.append("  " + " -> ".join("src/" + x for x in cyc))
        elif to not in state:
            walk(to, path)
    path.pop()
    state[f] = 2


sys.setrecursionlimit(10000)
for f in files:
    if f not in state:
        walk(f, [])

print("layer graph (folder -> folder it includes: #include lines):")
for a in LAYERS:
    row = [f"{b} {graph[(a, b)]}" for b in LAYERS if (a, b) in graph]
    if row:
        print(f"  {a:9s}-> " + ", ".join(row))
others = sorted({k for k in graph if k[0] not in RANK or k[1] not in RANK})
for a, b in others:
    print(f"  {a or 'src/'} -> {b or 'src/'}: {graph[(a, b)]}")
print("largest files:")
for f in sorted(lengths, key=lambda x: -lengths[x])[:5]:
    print(f"  {lengths[f]:5d} src/{f}")
long = [f"  src/{f}: {lengths[f]} lines" for f in files if lengths[f] > MAX_LINES]

failed = 0
for what, bad in (("includes point down the layers", up), ("no include cycle", cycles),
                  (f"no file over {MAX_LINES} lines", long),
                  ("no date or PERF.md in a comment", dated)):
    if bad:
        failed += 1
        print(f"[  FAILED  ] {what}: {len(bad)}")
        print("\n".join(bad))
    else:
        print(f"[       OK ] {what}")
sys.exit(1 if failed else 0)
PY
