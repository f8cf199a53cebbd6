#!/usr/bin/env bash
# Q2 parity (the single cell against Lipizzaner's): for each seed, the 1x1
# grid of configs/mnist-1x1.yaml for 100 and for 200 generations (the same
# trajectory: a run is deterministic, so the 100-generation run is the first
# half of the 200-generation one, scored on its own) and the 2x2 grid of
# configs/mnist-2x2.yaml for 100 generations. Every run scores its final
# ensemble on 10,000 samples (result.json). One worker per run; two runs at a
# time on the 2 cores. Pin the BLAS kernels (OPENBLAS_CORETYPE) for figures
# that compare with others'.
# Output: runs/q2-parity/<grid>-g<generations>-s<seed>/ ; then q2_parity_report.py.
# Environment: Q2P_SEEDS ("1 2 3"), Q2P_RUNS ("1x1-200 1x1-100 2x2-100": grid and
#              generations), Q2P_PARALLEL (2), CELLGAN (build/app/cellgan), Q2P_DIR
#              (runs/q2-parity).
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
DIR=${Q2P_DIR:-runs/q2-parity}
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
mkdir -p "$DIR"
jobs=()
for seed in ${Q2P_SEEDS:-1 2 3}; do
  for spec in ${Q2P_RUNS:-1x1-200 1x1-100 2x2-100}; do
    set -- ${spec/-/ }
    name="$1-g$2-s$seed"
    sed -e "s|^output_dir: .*|output_dir: $DIR/$name|" -e "s|^seed: .*|seed: $seed|" \
        -e "s|generations: 100|generations: $2|" "configs/mnist-$1.yaml" > "$DIR/$name.yaml"
    jobs+=("$name")
  done
done
run_one() {
  local name=$1
  [ -f "$DIR/$name/result.json" ] && { echo "q2-parity: $name already done"; return 0; }
  rm -rf "${DIR:?}/$name"
  echo "q2-parity: $name started $(date +%T)"
  mpirun $ROOT_FLAG --oversubscribe --bind-to none -np 2 "$CELLGAN" train "$DIR/$name.yaml" > "$DIR/$name.out" 2> "$DIR/$name.log"
  echo "q2-parity: $name done $(date +%T): $(head -1 "$DIR/$name.out")"
}
export -f run_one; export CELLGAN ROOT_FLAG DIR
printf '%s\n' "${jobs[@]}" | xargs -P "${Q2P_PARALLEL:-2}" -I{} bash -c 'run_one {}'
