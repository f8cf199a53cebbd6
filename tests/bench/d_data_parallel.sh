#!/usr/bin/env bash
# Benchmarks D1-D3 of layout data_parallel (tests/bench/README.md), in one
# run, in sequence, on one base configuration (the DCGAN pair by default):
#   D1  W = 1 (mpirun -np 2) against bench_bare_pair (one process, no MPI),
#       images per second                                   target >= 0.95x
#   D2  W = 2 against W = 1, weak scaling (and strong)      target >= 1.8x
#   D3  W = 2: ring, reduce_broadcast, mpi; fusion 0, 1 MB, 64 MB;
#       compression none against fp16: compute and communication seconds,
#       overhead %, scaling efficiency, bytes all-reduced per step
# then d_report.py prints the Markdown tables (also saved as report.md).
#
# Builds nothing. Run it on idle cores. Generation 1 of each run is
# warm-up; the last one is scored (evaluation), which the steps' timing
# leaves out.
#
# Environment (all optional):
#   CELLGAN            cellgan binary            (build/app/cellgan)
#   BARE_PAIR          bench_bare_pair binary    (build/tests/bench/bench_bare_pair)
#   BENCH_CONFIG       base configuration        (configs/dp-fashion-dcgan.yaml; needs its classifier)
#   BENCH_GENERATIONS  generations per run       (4; the first is warm-up)
#   BENCH_BATCHES      steps per generation      (50)
#   BENCH_DIR          where runs and logs go    (a new /tmp/cellgan-dp-bench.XXXXXX)
# A quick check of the script: BENCH_GENERATIONS=2 BENCH_BATCHES=3 tests/bench/d_data_parallel.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
BARE_PAIR=${BARE_PAIR:-build/tests/bench/bench_bare_pair}
CONFIG=${BENCH_CONFIG:-configs/dp-fashion-dcgan.yaml}
GENERATIONS=${BENCH_GENERATIONS:-4}
BATCHES=${BENCH_BATCHES:-50}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/cellgan-dp-bench.XXXXXX)}
mkdir -p "$DIR"
for bin in "$CELLGAN" "$BARE_PAIR"; do
  [ -x "$bin" ] || { echo "d_data_parallel: $bin: not an executable (build it first, or set CELLGAN / BARE_PAIR)" >&2; exit 2; }
done
[ -f "$CONFIG" ] || { echo "d_data_parallel: $CONFIG: no such configuration" >&2; exit 2; }
[ "$GENERATIONS" -ge 2 ] || { echo "d_data_parallel: BENCH_GENERATIONS must be >= 2 (generation 1 is warm-up)" >&2; exit 2; }
grep -q "^layout: data_parallel" "$CONFIG" || { echo "d_data_parallel: $CONFIG is not a data_parallel configuration" >&2; exit 2; }

export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"

# write_config NAME ALLREDUCE FUSION_BYTES COMPRESSION SCALING
write_config() {
  local out="$DIR/$1.yaml"
  sed -e "s|^output_dir: .*|output_dir: $DIR/$1|" \
      -e "s|^  generations: .*|  generations: $GENERATIONS|" \
      -e "s|^  batches_per_generation: .*|  batches_per_generation: $BATCHES|" \
      -e "s|^  preview_every: .*|  preview_every: 0|" \
      -e "s|^  every: .*|  every: 0|" \
      -e "s|^  allreduce: .*|  allreduce: $2|" \
      -e "s|^  fusion_bytes: .*|  fusion_bytes: $3|" \
      -e "s|^  compression: .*|  compression: $4|" \
      -e "s|^  scaling: .*|  scaling: $5|" "$CONFIG" > "$out"
  for want in "output_dir: $DIR/$1" "  allreduce: $2" "  fusion_bytes: $3" "  compression: $4" "  scaling: $5" \
              "  generations: $GENERATIONS" "  batches_per_generation: $BATCHES"; do
    grep -qx -- "$want" "$out" || { echo "d_data_parallel: could not set '$want' in $out" >&2; exit 2; }
  done
}
load() { cut -d' ' -f1-3 /proc/loadavg; }
run_cellgan() {  # name ranks
  echo "d_data_parallel: $1 (mpirun -np $2) started $(date +%T), load $(load)"
  echo "load before $1: $(load)" >> "$DIR/env.txt"
  mpirun $ROOT_FLAG --oversubscribe --bind-to none -np "$2" "$CELLGAN" train "$DIR/$1.yaml" < /dev/null > "$DIR/$1.out" 2> "$DIR/$1.log" \
    || { echo "d_data_parallel: $1 failed; see $DIR/$1.log" >&2; exit 1; }
}
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -n), $(getconf _NPROCESSORS_ONLN) cores"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "config: $CONFIG, generations $GENERATIONS, steps per generation $BATCHES"
} > "$DIR/env.txt"

MB64=67108864
# name         ranks allreduce        fusion   compression scaling
RUNS="w1           2 ring             $MB64    none        weak
w2           3 ring             $MB64    none        weak
w1-strong    2 ring             $MB64    none        strong
w2-strong    3 ring             $MB64    none        strong
w2-rb        3 reduce_broadcast $MB64    none        weak
w2-mpi       3 mpi              $MB64    none        weak
w2-fusion0   3 ring             0        none        weak
w2-fusion1m  3 ring             1048576  none        weak
w2-fp16      3 ring             $MB64    fp16        weak"
while read -r name ranks allreduce fusion compression scaling; do
  write_config "$name" "$allreduce" "$fusion" "$compression" "$scaling"
done <<< "$RUNS"

run_cellgan w1 2
echo "d_data_parallel: bare pair started $(date +%T), load $(load)"
echo "load before bare: $(load)" >> "$DIR/env.txt"
"$BARE_PAIR" "$DIR/w1.yaml" > "$DIR/bare.out" 2> "$DIR/bare.log" \
  || { echo "d_data_parallel: the bare pair failed; see $DIR/bare.log" >&2; exit 1; }
while read -r name ranks _; do
  [ "$name" = w1 ] || run_cellgan "$name" "$ranks"
done <<< "$RUNS"
echo "d_data_parallel: done $(date +%T); logs in $DIR"
echo
python3 tests/bench/d_report.py "$DIR" | tee "$DIR/report.md"
