#!/bin/sh
# make test-symbols: the library exports exactly the symbols of its version
# script, and its soname is libtgemm.so.MAJOR.
# usage: check-symbols.sh LIBRARY SONAME VERSION_SCRIPT SCRATCH_DIR
set -eu
lib=$1 soname=$2 map=$3 dir=$4
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort > "$dir/exported.txt"
sed -n 's/^ *\([a-z_0-9]*\);$/\1/p' "$map" | sort > "$dir/expected.txt"
[ -s "$dir/expected.txt" ] || { echo "check-symbols: no symbols found in $map" >&2; exit 1; }
diff -u "$dir/expected.txt" "$dir/exported.txt"
readelf -d "$lib" | grep -q "SONAME.*\[$soname\]" || { echo "check-symbols: soname is not $soname" >&2; exit 1; }
echo "check-symbols: $(wc -l < "$dir/exported.txt") symbols exported, as in $map; soname $soname"
