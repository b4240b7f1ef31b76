#!/bin/sh
# Runs one MPI process with a trace file of its own: under mpirun,
#
#   per_rank.sh PREFIX [VAR=value...] COMMAND [ARG...]
#
# runs COMMAND with TGEMM_TRACE=PREFIX.RANK and the settings given (through
# env, so that a preloaded library is loaded by COMMAND and not by this
# shell). RANK is the process's rank in the job: Open MPI's
# OMPI_COMM_WORLD_RANK, else MPICH/Hydra's PMI_RANK, else Slurm's
# SLURM_PROCID.
set -eu
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-}}}
[ -n "$rank" ] || { echo "per_rank.sh: no MPI rank in the environment (not started by mpirun?)" >&2; exit 3; }
prefix=$1
shift
exec env TGEMM_TRACE="$prefix.$rank" "$@"
