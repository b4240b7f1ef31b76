#!/bin/sh
# The registry of tiled kernel families (src/kernels/families.def) is the
# one list: the places that name every family must name the same set.
#  - README.md and docs/mainpage.md: TGEMM_KERNEL's row in the settings
#    table;
# The Makefile's KERNEL_FAMILIES, the library's kTiledFamilies[] and
# tests/gpu-session.sh's sweep read the registry itself. One "[       OK ]" or "[  FAILED  ]" line
# per place.
set -eu
root=$(dirname "$0")/..
registry=$(sed -n 's/^TGEMM_TILED_FAMILY(\([0-9x]*\),.*/\1/p' "$root/src/kernels/families.def")
sorted() { tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' '; }
want=$(echo $registry | sorted)
[ -n "$want" ] || { echo "[  FAILED  ] no family in src/kernels/families.def"; exit 1; }
rc=0
same() {
    if [ "$2" = "$3" ]; then
        echo "[       OK ] $1"
    else
        echo "[  FAILED  ] $1"
        echo "  registry: $3"
        echo "  found:    $2"
        rc=1
    fi
}
for doc in README.md docs/mainpage.md; do
    got=$(grep '^| `TGEMM_KERNEL` |' "$root/$doc" | grep -o '`[0-9]*x[0-9]*x[0-9]*`' | tr -d '`' | sorted)
    same "$doc: TGEMM_KERNEL's families" "$got" "$want"
done
exit $rc
