#!/usr/bin/env bash
# Q2, image quality on MNIST-10k: for each replacement rule, the 2x2 grid
# for 100 generations, the 1x1 grid for 100 generations, and the 1x1 grid
# for 400 generations (as many generator steps as the four 2x2 cells
# together). Results are identical for any worker count, so every run uses
# one worker and two runs go at a time on the 2 cores.
# Output: runs/q2/<rule>-<grid>-g<generations>/ ; then q2_report.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
mkdir -p runs/q2
jobs=()
for rule in always if_better; do
  for spec in "2x2 100" "1x1 400" "1x1 100"; do
    set -- $spec
    name="$rule-$1-g$2"
    cfg="runs/q2/$name.yaml"
    sed -e "s|^output_dir: .*|output_dir: runs/q2/$name|" -e "s|replacement: .*|replacement: $rule|" \
        -e "s|generations: 100|generations: $2|" "configs/mnist-$1.yaml" > "$cfg"
    jobs+=("$name")
  done
done
run_one() {
  local name=$1
  [ -f "runs/q2/$name/result.json" ] && { echo "q2: $name already done"; return 0; }
  rm -rf "runs/q2/$name"
  echo "q2: $name started $(date +%T)"
  mpirun $ROOT_FLAG --oversubscribe --bind-to none -np 2 "$CELLGAN" train "runs/q2/$name.yaml" > "runs/q2/$name.out" 2> "runs/q2/$name.log"
  echo "q2: $name done $(date +%T): $(head -1 "runs/q2/$name.out")"
}
export -f run_one; export CELLGAN ROOT_FLAG
# Q2_JOBS="name ..." runs a subset, e.g. "always-2x2-g100 always-1x1-g100".
[ -n "${Q2_JOBS:-}" ] && read -r -a jobs <<< "$Q2_JOBS"
printf '%s\n' "${jobs[@]}" | xargs -P "${Q2_PARALLEL:-2}" -I{} bash -c 'run_one {}'
