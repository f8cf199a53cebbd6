#!/usr/bin/env bash
# Q1, mode coverage on the toy mixtures: configs/ring-3x3.yaml and
# configs/grid-3x3.yaml against the same networks on a 1x1 grid with the same
# total number of generator steps (9x the generations), over 5 seeds each.
# Results are identical for any worker count, so every run uses one worker
# and two runs go at a time. Output: runs/q1/ ; then q1_report.py.
# With the shipped configurations (1,800 generations, R1) a 3x3 run takes about
# 43 minutes with two workers on 2 cores and a 1x1 (16,200 generations) about
# 80 minutes on one core: 5 seeds of both mixtures are about a day here. Q1_SEEDS="1 2 3"
# runs fewer. Finished runs (result.json present) are kept
# while their configuration (comments aside) is unchanged; others run again.
# Q1_GENERATIONS=N gives the 3x3 runs N generations instead of the
# configurations' (the 1x1 runs 9N); its runs go to runs/q1-gN.
# Q1_R1=γ sets training.r1_penalty: γ in both; its runs go to runs/q1-r1_γ
# (runs/q1-gN-r1_γ with both). Q1_DATA="grid" runs one of the mixtures.
# Q1_WORKERS=2 Q1_PARALLEL=1 gives each 3x3 run two workers and runs one at a
# time: the same results, each run finished in about half the time.
# Q1_GRIDS="3x3" runs only the 3x3 side (default "3x3 1x1").
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
SEEDS=${Q1_SEEDS:-"1 2 3 4 5"}
OUT=runs/q1${Q1_GENERATIONS:+-g$Q1_GENERATIONS}${Q1_R1:+-r1_$Q1_R1}
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
mkdir -p "$OUT"
jobs=()
for data in ${Q1_DATA:-ring grid}; do
  gens=${Q1_GENERATIONS:-$(grep '^  generations:' "configs/$data-3x3.yaml" | awk '{print $2}')}
  for seed in $SEEDS; do
    for grid in ${Q1_GRIDS:-3x3 1x1}; do
      name="$data-$grid-s$seed"
      g=$gens; [ "$grid" = 1x1 ] && g=$((gens * 9))
      sed -e "s|^output_dir: .*|output_dir: $OUT/$name|" -e "s|^seed: .*|seed: $seed|" \
          -e "s|^  generations: .*|  generations: $g|" -e "s|rows: 3|rows: ${grid%x*}|" -e "s|cols: 3|cols: ${grid#*x}|" \
          ${Q1_R1:+-e "/^  r1_penalty:/d" -e "s|^training:|training:\n  r1_penalty: $Q1_R1|"} \
          "configs/$data-3x3.yaml" > "$OUT/$name.yaml.new"
      # A finished run made from another configuration is stale.
      if ! cmp -s <(grep -v '^ *#' "$OUT/$name.yaml.new") <(grep -sv '^ *#' "$OUT/$name.yaml"); then
        rm -rf "${OUT:?}/$name"
      fi
      mv "$OUT/$name.yaml.new" "$OUT/$name.yaml"
      jobs+=("$name")
    done
  done
done
run_one() {
  local name=$1
  [ -f "$OUT/$name/result.json" ] && return 0
  rm -rf "$OUT/$name"
  local workers=${Q1_WORKERS:-1}; [[ $name == *-1x1-* ]] && workers=1
  if ! mpirun $ROOT_FLAG --oversubscribe --bind-to none -np $((workers + 1)) "$CELLGAN" train "$OUT/$name.yaml" \
       > "$OUT/$name.out" 2> "$OUT/$name.log"; then
    echo "q1: $name: failed, see $OUT/$name.log" >&2
    return 1
  fi
  echo "q1: $name: $(head -1 "$OUT/$name.out")"
}
export -f run_one; export CELLGAN ROOT_FLAG OUT Q1_WORKERS
status=0
printf '%s\n' "${jobs[@]}" | xargs -P "${Q1_PARALLEL:-2}" -I{} bash -c 'run_one {}' || status=$?
python3 tests/bench/q1_report.py "$OUT"
exit "$status"
