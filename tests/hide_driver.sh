#!/bin/sh
# Runs COMMAND as on a machine where no NVIDIA driver is installed, for
# tests/check-gpu-probe.sh on a machine that has one: in a private mount
# namespace (root and unshare -m), an empty directory covers
# /proc/driver/nvidia and /dev/null covers every libcuda.so.1 the
# dynamic loader could open (the ld.so cache's, LD_LIBRARY_PATH's, the
# usual driver directories'), so that neither test tests/gpu_probe.c makes
# finds a driver and the CUDA runtime loads none. Nothing outside the
# namespace changes. Exits 3 without running COMMAND where that cannot be
# done (not root, no unshare or mount, a mount refused).
# usage: hide_driver.sh COMMAND [ARG...]
set -u
[ "$(id -u)" = 0 ] && command -v unshare > /dev/null 2>&1 && command -v mount > /dev/null 2>&1 || exit 3
exec unshare -m sh -c '
    mount --make-rprivate / 2> /dev/null || exit 3
    if [ -d /proc/driver/nvidia ]; then
        mount -t tmpfs -o size=16k,mode=555 tmpfs /proc/driver/nvidia 2> /dev/null || exit 3
    fi
    libs=$(ldconfig -p 2> /dev/null | sed -n "s/^[[:space:]]*libcuda\.so\.1 .*=> //p")
    for d in $(printf "%s\n" "${LD_LIBRARY_PATH:-}" | tr ":" " ") /lib /usr/lib /lib64 /usr/lib64 \
             /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/local/nvidia/lib /usr/local/nvidia/lib64; do
        libs="$libs $d/libcuda.so.1"
    done
    for f in $libs; do
        [ -e "$f" ] || continue
        real=$(readlink -f "$f")
        mount --bind /dev/null "$real" 2> /dev/null || exit 3
    done
    exec "$@"' hide_driver "$@"
