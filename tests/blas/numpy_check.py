"""make test-numpy: numpy's float32 products with libtgemm preloaded.

numpy from the system's packages (Debian's python3-numpy) multiplies float32
matrices with cblas_sgemm of the system's CBLAS, looked up by name, so
LD_PRELOAD=libtgemm.so sends them to tgemm. The interpreter loads numpy's
BLAS with RTLD_LOCAL, out of tgemm's reach: tgemm must find the system's CPU
BLAS itself for the products it keeps on the CPU. Checked, each scenario in
its own process (settings are read once):

  auto       TGEMM_OFFLOAD_CPU_GFLOPS=1: small products path=cpu (a real
             CPU BLAS, never `builtin`), large ones path=gpu, or without a
             GPU path=cpu-fallback:no-device; nothing on stderr
  verbose    TGEMM_OFFLOAD=cpu TGEMM_VERBOSE=1: every product path=cpu, and
             the one line on stderr names the CPU BLAS, a library of the
             system's and not libtgemm
  gpu        TGEMM_OFFLOAD=gpu: every product path=gpu; without a GPU every
             one path=cpu-fallback:no-device and exactly one warning line

In every scenario each product is one trace line, and each result is within
the FP32 dot-product bound of the float64 product:
|C - C64| <= gamma(k+2) (|A| |B|), gamma(n) = n u / (1 - n u), u = 2^-24.

A numpy that does not call cblas_sgemm by that name (a pip wheel bundles its
own OpenBLAS with renamed symbols) cannot be intercepted: the test says why
and which library numpy uses; that, or no numpy at all, fails when CI is set
and is reported as not run otherwise.

usage: numpy_check.py LIBTGEMM HAS_GPU_PROGRAM WORKDIR
       numpy_check.py --child probe|products   (run by the above)
"""
import os
import re
import shutil
import subprocess
import sys

# (m, n, k, how): C = op(A) op(B) with op(A) m x k and op(B) k x n; how says
# which operands are transposed views (numpy passes them as transposes).
# Small ones stay below 2e6 flops, where the automatic policy keeps calls on
# the CPU BLAS without its model; large ones are far above (the auto scenario
# pins the CPU BLAS's rate low, TGEMM_OFFLOAD_CPU_GFLOPS, so that the model
# sends them to the GPU whatever this host's CPU, each one saving more than
# the GPU's start costs; src/blas/offload.cpp, offload_model.hpp).
SMALL = [(8, 8, 8, "NN"), (33, 17, 65, "TN"), (100, 50, 70, "NT"), (64, 96, 40, "TT")]
LARGE = [(1024, 1024, 1024, "NN"), (1536, 512, 768, "TN")]
SEED = 20240611


def mapped_libraries(pattern):
    """Files mapped into this process whose name matches `pattern`."""
    found = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and re.search(pattern, os.path.basename(parts[5])) and parts[5] not in found:
                found.append(parts[5])
    return found


def numpy_core_module():
    """numpy's compiled core, the module that calls the BLAS."""
    try:
        import numpy._core._multiarray_umath as m  # numpy 2
    except ImportError:
        import numpy.core._multiarray_umath as m  # numpy 1
    return m.__file__


def child_probe():
    """One small float32 product; prints what the parent needs to explain
    a numpy that tgemm cannot intercept."""
    import numpy as np

    a = np.ones((8, 8), np.float32)
    c = a @ a
    assert float(c[0, 0]) == 8.0
    print("numpy", np.__version__, np.__file__)
    print("core", numpy_core_module())
    for lib in mapped_libraries(r"tgemm"):
        print("tgemm", lib)
    for lib in mapped_libraries(r"blas|mkl|blis|atlas"):
        print("blas", lib)


def child_products():
    """Every product of SMALL and LARGE, each checked against float64."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    u = 2.0 ** -24
    bad = 0
    for m, n, k, how in SMALL + LARGE:
        # Stored so that op(A), op(B) are views numpy hands to the BLAS as
        # transposes; A and B are distinct arrays (A @ A.T would be syrk).
        a = rng.uniform(-1, 1, (k, m) if how[0] == "T" else (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (n, k) if how[1] == "T" else (k, n)).astype(np.float32)
        op_a = a.T if how[0] == "T" else a
        op_b = b.T if how[1] == "T" else b
        c = op_a @ op_b
        exact = op_a.astype(np.float64) @ op_b.astype(np.float64)
        scale = np.abs(op_a).astype(np.float64) @ np.abs(op_b).astype(np.float64)
        gamma = (k + 2) * u / (1 - (k + 2) * u)
        err = np.abs(c.astype(np.float64) - exact)
        worst = float(np.max(err / np.maximum(gamma * scale, np.finfo(np.float64).tiny)))
        ok = c.dtype == np.float32 and c.shape == (m, n) and bool(np.all(err <= gamma * scale))
        print(f"{how} {m}x{n}x{k}: max |error| / bound = {worst:.3g} {'ok' if ok else 'FAIL'}")
        bad += not ok
    return 1 if bad else 0


class NotRunnable(Exception):
    """This python's numpy cannot exercise tgemm; the message says why."""


def trace_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.rstrip("\n") for line in f if line.startswith("tgemm trace: ")]


def main():
    lib, has_gpu, work = sys.argv[1:4]
    try:
        import numpy
    except ImportError as e:
        raise NotRunnable(f"{sys.executable} has no numpy ({e}); install Debian's python3-numpy, "
                          "or point NUMPY_PYTHON at a python3 whose numpy uses the system's BLAS")
    probe = subprocess.run([has_gpu], capture_output=True, text=True, check=True)
    gpu = probe.stdout.strip() == "1"
    sys.stdout.write(probe.stderr)  # has_gpu's "[ SKIPPING ] reason" without a GPU
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    base = {k: v for k, v in os.environ.items() if not k.startswith("TGEMM_") and k != "LD_PRELOAD"}
    base["LD_PRELOAD"] = lib

    def run(name, extra, mode):
        trace = os.path.join(work, name + ".trace")
        env = dict(base, TGEMM_TRACE=trace, **extra)
        p = subprocess.run([sys.executable, __file__, "--child", mode], env=env, capture_output=True, text=True)
        settings = " ".join(f"{k}={v}" for k, v in extra.items())
        print(f"== {name}: {settings or '(defaults)'}")
        if p.stdout:
            print(p.stdout, end="")
        if p.returncode != 0:
            sys.exit(f"test-numpy: {name}: exit status {p.returncode}\n{p.stdout}{p.stderr}")
        return trace_lines(trace), p.stdout, [line for line in p.stderr.splitlines() if line]

    # Can tgemm see numpy's products at all?
    lines, out, _ = run("probe", {"TGEMM_OFFLOAD": "cpu"}, "probe")
    info = dict((line.split(" ", 1) + [""])[:2] for line in out.splitlines())
    if "tgemm" not in info:
        sys.exit(f"test-numpy: libtgemm was not loaded into {sys.executable} by LD_PRELOAD={lib}")
    blas = [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("blas ")]
    if not lines:
        # Why no call reached tgemm: the symbols numpy's core imports for it.
        version = info.get("numpy", "?").split()[0]
        where = f"numpy {version} ({info.get('core', '?')}; BLAS libraries mapped: {', '.join(blas) or 'none'})"
        if not shutil.which("nm"):
            raise NotRunnable(f"no float32 product of {where} reached tgemm's cblas_sgemm, and without nm "
                              "(binutils) this test cannot tell which symbol numpy calls instead")
        nm = subprocess.run(["nm", "-D", "--undefined-only", info["core"]], capture_output=True, text=True)
        gemm = sorted({w for w in nm.stdout.split() if "sgemm" in w})
        if "cblas_sgemm" in gemm:
            sys.exit(f"test-numpy: {where} imports cblas_sgemm, yet no product reached libtgemm's")
        raise NotRunnable(
            f"{where} imports {', '.join(gemm) or 'no sgemm symbol'} instead of cblas_sgemm, a name libtgemm "
            "does not define, so LD_PRELOAD cannot intercept its products (pip wheels bundle an OpenBLAS with "
            "renamed symbols). Use a numpy built against the system's BLAS (Debian's python3-numpy with "
            "NUMPY_PYTHON=/usr/bin/python3)")
    print(f"numpy {info['numpy'].split()[0]}; BLAS libraries mapped: {', '.join(blas)}")

    small = {(m, n, k) for m, n, k, _ in SMALL}
    large = {(m, n, k) for m, n, k, _ in LARGE}
    ops = {(m, n, k): how for m, n, k, how in SMALL + LARGE}

    def check(name, lines, want_small, want_large):
        """One trace line per product, each with the path wanted for its size."""
        if len(lines) != len(SMALL) + len(LARGE):
            sys.exit(f"test-numpy: {name}: {len(lines)} trace lines for {len(SMALL) + len(LARGE)} products:\n"
                     + "\n".join(lines))
        for line in lines:
            dims = re.search(r" m=(\d+) n=(\d+) k=(\d+) ", line)
            if not dims or "entry=cblas_sgemm " not in line:
                sys.exit(f"test-numpy: {name}: unexpected trace line: {line}")
            m, n, k = map(int, dims.groups())
            # numpy may hand the product over as its transpose (m and n
            # swapped, and then the transposes too); else they are op(A)'s
            # and op(B)'s.
            key = (m, n, k) if (m, n, k) in ops else (n, m, k)
            want = want_small if key in small else want_large if key in large else None
            if want is None or f" path={want} " not in line:
                sys.exit(f"test-numpy: {name}: want path={want}: {line}")
            how = ops[key] if key == (m, n, k) else ops[key][::-1]
            if f" transa={how[0]} transb={how[1]} " not in line:
                sys.exit(f"test-numpy: {name}: want transa={how[0]} transb={how[1]}: {line}")
        paths = sorted({re.search(r" path=(\S+)", line).group(1) for line in lines})
        print(f"trace: {len(lines)} products, paths {' '.join(paths)}")

    def stderr_is(name, err, count, pattern=None):
        if len(err) != count or (pattern and not re.search(pattern, err[0])):
            sys.exit(f"test-numpy: {name}: want {count} line(s) on stderr{' matching ' + pattern if pattern else ''}, "
                     f"got: {err}")
        for line in err:
            print(f"stderr: {line}")

    fallback = "gpu" if gpu else "cpu-fallback:no-device"
    lines, _, err = run("auto", {"TGEMM_OFFLOAD_CPU_GFLOPS": "1"}, "products")
    check("auto", lines, "cpu", fallback)
    stderr_is("auto", err, 0)

    lines, _, err = run("verbose", {"TGEMM_OFFLOAD": "cpu", "TGEMM_VERBOSE": "1"}, "products")
    check("verbose", lines, "cpu", "cpu")
    stderr_is("verbose", err, 1, r"^tgemm: CPU BLAS: /\S+ \((the system's, found as \S+|loaded after libtgemm)\)$")
    if "tgemm" in os.path.basename(err[0].split()[3]):
        sys.exit(f"test-numpy: the CPU BLAS is a libtgemm: {err[0]}")

    lines, _, err = run("gpu", {"TGEMM_OFFLOAD": "gpu"}, "products")
    check("gpu", lines, fallback, fallback)
    if gpu:
        stderr_is("gpu", err, 0)
    else:
        stderr_is("gpu", err, 1, r"^tgemm: TGEMM_OFFLOAD=gpu, but the GPU could not run a BLAS call \(.*\); calls it cannot run go to /")
    print(f"test-numpy: OK ({sys.executable}, numpy {numpy.__version__}, {'GPU' if gpu else 'no GPU'})")
    print("[       OK ] numpy's float32 products under LD_PRELOAD: paths, results, stderr")
    if not gpu:
        print("[  SKIPPED ] numpy's large float32 products on the GPU")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        if sys.argv[2] == "probe":
            child_probe()
            sys.exit(0)
        sys.exit(child_products())
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    try:
        main()
    except NotRunnable as e:
        if os.environ.get("CI"):
            sys.exit(f"test-numpy: cannot run, and CI requires it: {e}")
        print(f"test-numpy: NOT RUN: {e}")
        print(f"[ SKIPPING ] {e}")
        print("[  SKIPPED ] numpy's float32 products under LD_PRELOAD")
