#!/bin/sh
# Checks a staged install (make test-install): layout, symlinks, the .pc
# file's paths (PREFIX, never DESTDIR), then builds and runs a consumer with
# nothing but `pkg-config --cflags --libs tgemm`.
# usage: check-install.sh DESTDIR PREFIX VERSION MAJOR
set -eu
destdir=$1 prefix=$2 version=$3 major=$4
root=$destdir$prefix
fail() { echo "check-install: $*" >&2; exit 1; }

for f in include/tgemm.h include/tgemm.f90 lib/libtgemm.so.$version lib/pkgconfig/tgemm.pc share/doc/tgemm/README.md; do
    [ -f "$root/$f" ] || fail "missing $prefix/$f"
done
[ "$(readlink "$root/lib/libtgemm.so.$major")" = "libtgemm.so.$version" ] || fail "bad libtgemm.so.$major link"
[ "$(readlink "$root/lib/libtgemm.so")" = "libtgemm.so.$major" ] || fail "bad libtgemm.so link"
grep -q "^prefix=$prefix\$" "$root/lib/pkgconfig/tgemm.pc" || fail "tgemm.pc prefix is not $prefix"
! grep -q "$destdir" "$root/lib/pkgconfig/tgemm.pc" || fail "tgemm.pc mentions DESTDIR"
grep -q "^Version: $version\$" "$root/lib/pkgconfig/tgemm.pc" || fail "tgemm.pc version is not $version"

# The .pc file names $prefix; point pkg-config at the staged tree the way a
# packager's sysroot would.
export PKG_CONFIG_PATH="$root/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$destdir"
[ "$(pkg-config --modversion tgemm)" = "$version" ] || fail "pkg-config --modversion"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
libdir=$(pkg-config --variable=libdir tgemm)
case $libdir in "$destdir"/*) ;; *) libdir=$destdir$libdir ;; esac  # pkgconf adds the sysroot, pkg-config does not
# shellcheck disable=SC2046
${CC:-cc} -std=c99 -Wall -Wextra -Werror -o "$out/consumer" tests/consumer.c $(pkg-config --cflags --libs tgemm) \
    -Wl,-rpath,"$libdir"
"$out/consumer" "$version"
echo "check-install: layout, pkg-config and consumer OK ($prefix via DESTDIR)"
