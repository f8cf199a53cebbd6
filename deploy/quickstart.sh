#!/usr/bin/env bash
# Sets up everything and runs the quickstart: a 2x2 coevolution run on
# MNIST with 2 workers (3 MPI ranks). Ends with runs/quickstart/samples.png
# and the best ensemble's FID and TVD.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
bash deploy/build.sh
bash deploy/prepare-data.sh
rm -rf runs/quickstart
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
mpirun $ROOT_FLAG --oversubscribe --bind-to none -np 3 build/app/cellgan train configs/quickstart.yaml
