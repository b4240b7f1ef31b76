#!/bin/sh
# make test-symbols: the library exports exactly the symbols of its version
# script, each under the version node the script puts it in, and its soname
# is libtgemm.so.MAJOR.
# usage: check-symbols.sh LIBRARY SONAME VERSION_SCRIPT SCRATCH_DIR
set -eu
lib=$1 soname=$2 map=$3 dir=$4
# "name@@NODE" (the default version of name) as "name NODE".
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sed 's/@@*/ /' | sort > "$dir/exported.txt"
# The script's "NODE {" lines open a node; "    name;" lines name its symbols.
awk '/^[A-Za-z_0-9.]+ *\{/ {node = $1} /^ *[a-z_0-9]+;$/ {sub(/;$/, "", $1); print $1 " " node}' "$map" |
    sort > "$dir/expected.txt"
[ -s "$dir/expected.txt" ] || { echo "check-symbols: no symbols found in $map" >&2; exit 1; }
diff -u "$dir/expected.txt" "$dir/exported.txt"
readelf -d "$lib" | grep -q "SONAME.*\[$soname\]" || { echo "check-symbols: soname is not $soname" >&2; exit 1; }
echo "check-symbols: $(wc -l < "$dir/exported.txt") symbols exported, as in $map; soname $soname"
