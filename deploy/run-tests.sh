#!/usr/bin/env bash
# Sets up everything and runs the whole test suite with CTest: unit tests
# and the multi-rank tests launched through mpirun.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
bash deploy/build.sh
# MNIST and its score classifier (once; skipped when present): the tests of
# the conditional generators check their classes with it.
bash deploy/prepare-data.sh
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ctest --test-dir build --output-on-failure --timeout 600
