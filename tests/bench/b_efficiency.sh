#!/usr/bin/env bash
# Benchmarks B1-B4 (tests/bench/README.md), in one run, in sequence:
#   1. cellgan, 2x2 grid, W = 1 worker  (mpirun -np 2)
#   2. bench_bare_loop on the same configuration (one process, no MPI)
#   3. cellgan, 2x2 grid, W = 2 workers (mpirun -np 3)
# then b_report.py prints the Markdown table (also saved as report.md).
#
# Builds nothing. Run it on idle cores: the numbers mean nothing while
# other jobs share the CPU (the report records the load average).
#
# Environment (all optional):
#   CELLGAN            cellgan binary            (build/app/cellgan)
#   BARE               bench_bare_loop binary    (build/tests/bench/bench_bare_loop)
#   BENCH_CONFIG       base configuration        (configs/mnist-2x2.yaml)
#   BENCH_GENERATIONS  generations per run       (5; the first is warm-up)
#   BENCH_BATCHES      batches_per_generation    (as in the config: 0 = one epoch)
#   BENCH_DIR          where runs and logs go    (a new /tmp/cellgan-bench.XXXXXX)
# Example, a quick check of the scripts:
#   BENCH_GENERATIONS=2 BENCH_BATCHES=5 tests/bench/b_efficiency.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
BARE=${BARE:-build/tests/bench/bench_bare_loop}
CONFIG=${BENCH_CONFIG:-configs/mnist-2x2.yaml}
GENERATIONS=${BENCH_GENERATIONS:-5}
BATCHES=${BENCH_BATCHES:-}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/cellgan-bench.XXXXXX)}
mkdir -p "$DIR"

for bin in "$CELLGAN" "$BARE"; do
  [ -x "$bin" ] || { echo "b_efficiency: $bin: not an executable (build it first, or set CELLGAN / BARE)" >&2; exit 2; }
done
[ -f "$CONFIG" ] || { echo "b_efficiency: $CONFIG: no such configuration" >&2; exit 2; }
[ "$GENERATIONS" -ge 2 ] || { echo "b_efficiency: BENCH_GENERATIONS must be >= 2 (generation 1 is warm-up)" >&2; exit 2; }

export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"

# One configuration per cellgan run (a run directory holds one run); the
# bare loop reads the W = 1 one.
write_config() {  # name
  local out="$DIR/$1.yaml"
  local args=(-e "s|^output_dir: .*|output_dir: $DIR/$1|" -e "s|^  generations: .*|  generations: $GENERATIONS|")
  [ -n "$BATCHES" ] && args+=(-e "s|^  batches_per_generation: .*|  batches_per_generation: $BATCHES|")
  sed "${args[@]}" "$CONFIG" > "$out"
  grep -q "^output_dir: $DIR/$1\$" "$out" && grep -q "^  generations: $GENERATIONS\$" "$out" \
    || { echo "b_efficiency: could not rewrite $CONFIG (output_dir / training.generations)" >&2; exit 2; }
  if [ -n "$BATCHES" ]; then
    grep -q "^  batches_per_generation: $BATCHES\$" "$out" \
      || { echo "b_efficiency: could not set training.batches_per_generation in $out" >&2; exit 2; }
  fi
}
write_config w1
write_config w2

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -n), $(getconf _NPROCESSORS_ONLN) cores"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "config: $CONFIG, generations $GENERATIONS, batches_per_generation ${BATCHES:-as configured}"
  echo "cellgan: $CELLGAN"
  echo "bare: $BARE"
} > "$DIR/env.txt"

load() { cut -d' ' -f1-3 /proc/loadavg; }
# Host check: the same CPU-bound loop alone, then two at once. On a fair
# 2-core host the pair takes about as long as the one; on a shared host
# that cannot give two cores' worth of work, B2 measures the host.
spin() { python3 -c 'import time
t = time.perf_counter(); s = 0
for i in range(20_000_000): s += i
print(f"{time.perf_counter() - t:.2f}")'; }
host_check() {  # when
  local alone pair
  alone=$(spin); pair=$( (spin & spin; wait) | sort -n | tr '\n' ' ')
  echo "host check $1: one loop alone $alone s; two at once ${pair% } s" >> "$DIR/env.txt"
}
host_check before
run_cellgan() {  # name ranks
  echo "b_efficiency: $1 (mpirun -np $2) started $(date +%T), load $(load)"
  echo "load before $1: $(load)" >> "$DIR/env.txt"
  mpirun $ROOT_FLAG --oversubscribe --bind-to none -np "$2" "$CELLGAN" train "$DIR/$1.yaml" > "$DIR/$1.out" 2> "$DIR/$1.log" \
    || { echo "b_efficiency: $1 failed; see $DIR/$1.log" >&2; exit 1; }
}

run_cellgan w1 2
echo "b_efficiency: bare loop started $(date +%T), load $(load)"
echo "load before bare: $(load)" >> "$DIR/env.txt"
"$BARE" "$DIR/w1.yaml" --generations "$GENERATIONS" > "$DIR/bare.out" 2> "$DIR/bare.log" \
  || { echo "b_efficiency: the bare loop failed; see $DIR/bare.log" >&2; exit 1; }
run_cellgan w2 3
host_check after
# OpenBLAS's kernels (chosen by CPU model, or by OPENBLAS_CORETYPE) set the
# speed and the rounding: the workers' as the runs recorded them in
# result.json (the bare loop names its own in bare.out).
python3 -c 'import json, sys
names = {k for run in sys.argv[1:] for k in json.load(open(run))["blas_kernels"]["workers"]}
print("blas:", " / ".join(sorted(names)))' "$DIR/w1/result.json" "$DIR/w2/result.json" >> "$DIR/env.txt"
if [ -n "${OPENBLAS_CORETYPE:-}" ]; then echo "blas pinned: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE" >> "$DIR/env.txt"; fi
echo "b_efficiency: done $(date +%T); logs in $DIR"
echo

python3 tests/bench/b_report.py "$DIR" | tee "$DIR/report.md"
