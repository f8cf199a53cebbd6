#!/usr/bin/env bash
# Q5 (the single cell against Lipizzaner's, tests/bench/README.md): for each
# seed, 200 generations of
#   lipizzaner  Lipizzaner's own 1x1 (lipizzaner_1x1.py; needs its set-up, README "Q2 parity")
#   cellgan     configs/mnist-1x1.yaml as it is
#   bce         the same with training.bce: pytorch
#   clamped     the same with training.bce: clamped
#   lr          the same with training.mutated_lr_reaches_adam: false
#   both        the same with both: Lipizzaner's BCE and its lr
# (each variant changes only what it names: at 4f7761b, where docs/results.md's Q5 ran, the default BCE was
# clamped; since then it is pytorch, so there `cellgan` is `bce` and `lr` is `both`)
# each scored with `cellgan score` on 10,000 samples (Lipizzaner's snapshot,
# cellgan's final ensemble). Two runs at a time, one thread each.
# Output: DIR/<variant>-s<seed>/ and DIR/<variant>-s<seed>.score; then q5_report.py DIR.
# Q6 (the 2x2 at generation 100) is the same script on another configuration:
#   Q5_CONFIG=configs/mnist-2x2.yaml Q5_GENERATIONS=100 Q5_SEEDS="1 2 3" Q5_VARIANTS="bce clamped" Q5_DIR=runs/q6-grid
# Environment: Q5_SEEDS ("1 2 3 4 5 6"), Q5_VARIANTS ("lipizzaner cellgan bce lr"), Q5_CONFIG
#              (configs/mnist-1x1.yaml), Q5_GENERATIONS (200), Q5_PARALLEL (2), Q5_DIR (runs/q5-single-cell),
#              CELLGAN (build/app/cellgan), LIPIZZANER_CONFIG (/tmp/lipizzaner/conf/mnist-1x1-offline.yml).
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
DIR=${Q5_DIR:-runs/q5-single-cell}
GENERATIONS=${Q5_GENERATIONS:-200}
CONFIG=${Q5_CONFIG:-configs/mnist-1x1.yaml}
LIPIZZANER_CONFIG=${LIPIZZANER_CONFIG:-/tmp/lipizzaner/conf/mnist-1x1-offline.yml}
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
mkdir -p "$DIR"

# The configuration of one cellgan variant.
write_config() {
  local variant=$1 seed=$2 out=$3
  local edits=(-e "s|^output_dir: .*|output_dir: $DIR/$variant-s$seed|" -e "s|^seed: .*|seed: $seed|"
               -e "s|^  generations: .*|  generations: $GENERATIONS|")
  case $variant in
    cellgan) ;;
    bce) edits+=(-e "/^  bce: /d" -e "s|^  loss: bce|  loss: bce\n  bce: pytorch|") ;;
    clamped) edits+=(-e "/^  bce: /d" -e "s|^  loss: bce|  loss: bce\n  bce: clamped|") ;;
    lr) edits+=(-e "s|^  mutation_scale: \(.*\)|  mutation_scale: \1\n  mutated_lr_reaches_adam: false|") ;;
    both) edits+=(-e "/^  bce: /d" -e "s|^  loss: bce|  loss: bce\n  bce: pytorch|"
                  -e "s|^  mutation_scale: \(.*\)|  mutation_scale: \1\n  mutated_lr_reaches_adam: false|") ;;
    *) echo "q5: unknown variant $variant" >&2; return 2 ;;
  esac
  sed "${edits[@]}" "$CONFIG" > "$out"
}

jobs=()
for seed in ${Q5_SEEDS:-1 2 3 4 5 6}; do
  for variant in ${Q5_VARIANTS:-lipizzaner cellgan bce lr}; do
    [ "$variant" = lipizzaner ] || write_config "$variant" "$seed" "$DIR/$variant-s$seed.yaml"
    jobs+=("$variant-s$seed")
  done
done

run_one() {
  local name=$1 variant=${1%-s*} seed=${1##*-s}
  [ -s "$DIR/$name.score" ] && { echo "q5: $name already done"; return 0; }
  rm -rf "${DIR:?}/$name"
  local began=$SECONDS
  if [ "$variant" = lipizzaner ]; then
    mkdir -p "$DIR/$name"
    PYTHONPATH=/tmp/lipizzaner/stubs /usr/bin/python3 tests/bench/lipizzaner_1x1.py --seed "$seed" \
      --generations "$GENERATIONS" --snapshots "$GENERATIONS" --config "$LIPIZZANER_CONFIG" \
      --out "$DIR/$name" > "$DIR/$name.out" 2> "$DIR/$name.log" || { echo "q5: $name failed"; return 1; }
    "$CELLGAN" score --config configs/mnist-1x1.yaml \
      --samples "$DIR/$name/seed$seed-gen$GENERATIONS.npy" > "$DIR/$name.score"
  else
    mpirun $ROOT_FLAG --oversubscribe --bind-to none -np 2 "$CELLGAN" train "$DIR/$name.yaml" \
      > "$DIR/$name.out" 2> "$DIR/$name.log" || { echo "q5: $name failed"; return 1; }
    "$CELLGAN" score --config "$DIR/$name/config.yaml" --ensemble "$DIR/$name/ensemble.bin" > "$DIR/$name.score"
  fi
  echo "q5: $name done in $((SECONDS - began)) s: $(cat "$DIR/$name.score")"
}
export -f run_one; export CELLGAN ROOT_FLAG DIR GENERATIONS LIPIZZANER_CONFIG
printf '%s\n' "${jobs[@]}" | xargs -P "${Q5_PARALLEL:-2}" -I{} bash -c 'run_one {}'
