#!/bin/sh
# make test-numpy: runs tests/blas/numpy_check.py with the python3 named by
# NUMPY_PYTHON, one whose numpy calls the system's cblas_sgemm (Debian's
# /usr/bin/python3 with python3-numpy). Without it: a failure when CI is
# set, else reported as skipped with the reason.
# usage: numpy.sh PYTHON LIBTGEMM HAS_GPU_PROGRAM WORKDIR
set -eu
python=$1
shift
if [ ! -x "$python" ]; then
    [ -z "${CI:-}" ] || { echo "test-numpy: $python not found; CI needs python3-numpy" >&2; exit 1; }
    echo "[ SKIPPING ] $python not found (NUMPY_PYTHON=...: a python3 with the system's numpy)"
    echo "[  SKIPPED ] numpy's float32 products under LD_PRELOAD"
    exit 0
fi
echo "$python tests/blas/numpy_check.py"
exec "$python" tests/blas/numpy_check.py "$@"
