#!/usr/bin/env python3
"""Compare the device code of two builds function by function.

    compare_code.py OLD_DIR NEW_DIR

Reads every .ptx file (nvcc -ptx) or .sass file (cuobjdump -sass) under each
directory, splits them into functions, and matches the functions of the two
sides by a key that does not depend on how the code spells its names: the
demangled name with each tiled shape written as its family (BMxBNxBK), so
that TileShape<256, 128, 16, ...> and TileShape<Tile256x128x16> meet, and
anonymous namespaces dropped. Bodies are compared after removing what may
differ without changing the code: debug and line directives (.loc, .file,
.section .debug*), comments, SASS addresses, the function's place in its
file in PTX labels ($L__BB<n>_, __local_depot<n>), and names (the
function's own mangled name, parameter names, callee names, which are
replaced by their keys).

Prints the functions found on one side only and those whose bodies differ;
exit status 1 if there are any, else 0 with the count of matched functions.
"""
import os
import re
import subprocess
import sys

SHAPE_OLD = re.compile(r'TileShape<(\d+), (\d+), (\d+)(?:, [^<>]*)?>')
SHAPE_NEW = re.compile(r'TileShape<(?:tgemm::kernels::)?Tile(\d+)x(\d+)x(\d+)>')
ANON = re.compile(r'\(anonymous namespace\)::')
INT_CAST = re.compile(r'\((?:int|unsigned int|bool)\)')


def demangle(names):
    """Demangled forms of the mangled names (c++filt), in order."""
    if not names:
        return []
    out = subprocess.run(['c++filt'], input='\n'.join(names) + '\n', capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def key_of(demangled):
    """The matching key of a demangled function name."""
    k = INT_CAST.sub('', demangled)
    k = SHAPE_OLD.sub(lambda m: 'Tile%sx%sx%s' % m.groups(), k)
    k = SHAPE_NEW.sub(lambda m: 'Tile%sx%sx%s' % m.groups(), k)
    k = ANON.sub('', k)
    return k


PTX_FUNC = re.compile(r'^(?:\.visible |\.weak |\.extern )*\.(entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)', re.M)
SASS_FUNC = re.compile(r'^\s*Function : (\S+)\s*$', re.M)


def split_ptx(text):
    """{mangled name: body text} of the functions defined in a PTX file."""
    funcs = {}
    starts = [m for m in PTX_FUNC.finditer(text)]
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        body = text[m.start():end]
        # A declaration (ends at ';' before any '{') defines nothing.
        brace, semi = body.find('{'), body.find(';')
        if brace < 0 or (0 <= semi < brace):
            continue
        funcs[m.group(2)] = body[:matching_brace(body, brace) + 1]
    return funcs


def matching_brace(text, start):
    """The index of the '}' that closes the '{' at start (the text's end if none)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == '{':
            depth += 1
        elif text[i] == '}':
            depth -= 1
            if depth == 0:
                return i
    return len(text) - 1


def split_sass(text):
    """{mangled name: body text} of the functions of a cuobjdump -sass listing."""
    funcs = {}
    starts = list(SASS_FUNC.finditer(text))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        body = text[m.end():end]
        # A function's listing ends at a line of dots; what follows belongs
        # to the next cubin's header.
        dots = re.search(r'^\s*\.{4,}\s*$', body, re.M)
        funcs[m.group(1)] = body[:dots.start()] if dots else body
    return funcs


DROP_LINE = re.compile(r'^\s*(?:\.loc|\.file|//|\.section\s+\.debug|\.pragma\s+"nounroll"\s*;\s*//)')
SASS_ADDR = re.compile(r'/\*[0-9a-f]{4,}\*/')
COMMENT = re.compile(r'//.*$')
IDENT = re.compile(r'_Z[\w$]+')
# PTX numbers basic-block labels and local depots by the function's place in
# its file: $L__BB<function>_<block>, __local_depot<function>.
FUNC_INDEX = re.compile(r'(\$L__BB|__local_depot)\d+')


def normalize(body, keys):
    """The body with debug lines, comments and names replaced by keys."""
    out = []
    for line in body.splitlines():
        if DROP_LINE.match(line):
            continue
        # Runs of blanks collapse: cuobjdump pads its columns to the widest
        # line of the file, which moves with the file's other functions.
        line = ' '.join(FUNC_INDEX.sub(r'\1', SASS_ADDR.sub('', COMMENT.sub('', line))).split())
        if not line:
            continue

        def name(m):
            tok = m.group(0)
            base, _, suffix = tok.partition('_param_')
            k = keys.get(base, base)
            return '<%s>%s' % (k, '_param_' + suffix if suffix else '')

        out.append(IDENT.sub(name, line))
    return out


def read_side(root):
    """{key: (file, normalized body)} of every function under root."""
    raw = {}
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            if f.endswith('.ptx'):
                funcs = split_ptx(open(path).read())
            elif f.endswith('.sass'):
                funcs = split_sass(open(path).read())
            else:
                continue
            for name, body in funcs.items():
                raw[(os.path.relpath(path, root), name)] = body
    text = '\n'.join(b for b in raw.values())
    mangled = sorted(set(IDENT.findall(text)) | {n for _, n in raw})
    mangled = sorted({m.partition('_param_')[0] for m in mangled})
    keys = dict(zip(mangled, (key_of(d) for d in demangle(mangled))))
    side = {}
    for (path, name), body in raw.items():
        k = keys.get(name, name)
        if k in side and side[k][1] != normalize(body, keys):
            k = '%s [%s]' % (k, path)
        side[k] = (path, normalize(body, keys))
    return side


def main(argv):
    if len(argv) != 3 or not all(os.path.isdir(d) for d in argv[1:]):
        sys.stderr.write(__doc__)
        return 2
    old, new = read_side(argv[1]), read_side(argv[2])
    only_old = sorted(set(old) - set(new))
    only_new = sorted(set(new) - set(old))
    differ = sorted(k for k in set(old) & set(new) if old[k][1] != new[k][1])
    for k in only_old:
        print('only in %s: %s (%s)' % (argv[1], k, old[k][0]))
    for k in only_new:
        print('only in %s: %s (%s)' % (argv[2], k, new[k][0]))
    for k in differ:
        a, b = old[k][1], new[k][1]
        i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        print('differs: %s (%s, %s) at line %d of %d/%d' % (k, old[k][0], new[k][0], i, len(a), len(b)))
        print('    old: %s' % (a[i] if i < len(a) else '<end>'))
        print('    new: %s' % (b[i] if i < len(b) else '<end>'))
    same = len(set(old) & set(new)) - len(differ)
    print('%d functions the same, %d differ, %d only in old, %d only in new' %
          (same, len(differ), len(only_old), len(only_new)))
    return 1 if only_old or only_new or differ else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
