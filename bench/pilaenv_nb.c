/* PBLAS's panel width, set from the environment: a stand-in for PILAENV
 * preloaded into a ScaLAPACK program (bench/scalapack_gpu.sh).
 *
 * Reference PBLAS's PSGEMM (PB_CpgemmAB, the algorithm it picks when C is
 * the largest operand) broadcasts op(A) and op(B) in panels of PILAENV
 * columns and rows and calls the node SGEMM once per panel: rank-32
 * updates of the whole local C, since ScaLAPACK's PILAENV returns 32 for
 * every precision, whatever the matrices' block size. Debian's
 * libscalapack calls pilaenv_ through its PLT, so a preloaded definition
 * replaces it without rebuilding ScaLAPACK:
 *
 *   LD_PRELOAD="libtgemm.so libpilaenv_nb.so" PILAENV_NB=1024 mpirun ... prog
 *
 * PILAENV_NB unset, empty or not a positive number: 32, ScaLAPACK's own.
 * A larger width means fewer, deeper local products (rank-1024 updates
 * instead of rank-32), which the GPU runs at far more flops per byte moved,
 * at the cost of workspace for the panels (local rows x width, twice) and
 * of less overlap of broadcasts with computation. */
#include <stdlib.h>

int pilaenv_(const int *ictxt, const char *prec);

int pilaenv_(const int *ictxt, const char *prec)
{
    (void)ictxt;
    (void)prec;
    const char *s = getenv("PILAENV_NB");
    char *end;
    const long v = s && *s ? strtol(s, &end, 10) : 0;
    return v > 0 && v <= 1 << 20 && *end == '\0' ? (int)v : 32;
}
