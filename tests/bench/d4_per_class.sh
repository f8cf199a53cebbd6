#!/usr/bin/env bash
# Benchmark D4 (issue 20): per_class weak scaling, in one run, in sequence:
#   1. per_class with 2 classes on W = 1 worker  (mpirun -np 2)
#   2. per_class with 4 classes on W = 2 workers (mpirun -np 3)
# The same classes per worker, so a perfect scaling keeps the time per
# generation: efficiency = time per generation (1) / time per generation (2).
# A generation's time is the busiest worker's: the sum of its classes'
# phase seconds (metrics.jsonl), generation 1 left out as warm-up. The
# wall time of each run is reported beside it. Target: >= 90%.
#
# Builds nothing. Run it on idle cores (the report records the load average).
#
# Environment (all optional):
#   CELLGAN            cellgan binary            (build/app/cellgan)
#   BENCH_CONFIG       base configuration        (configs/perclass-mnist.yaml)
#   BENCH_GENERATIONS  generations per run       (5; the first is warm-up)
#   BENCH_BATCHES      batches_per_generation    (as in the config)
#   BENCH_DIR          where runs and logs go    (a new /tmp/cellgan-d4.XXXXXX)
# A quick check of the script:
#   BENCH_GENERATIONS=2 BENCH_BATCHES=2 tests/bench/d4_per_class.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
CONFIG=${BENCH_CONFIG:-configs/perclass-mnist.yaml}
GENERATIONS=${BENCH_GENERATIONS:-5}
BATCHES=${BENCH_BATCHES:-}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/cellgan-d4.XXXXXX)}
mkdir -p "$DIR"
[ -x "$CELLGAN" ] || { echo "d4_per_class: $CELLGAN: not an executable (build it first, or set CELLGAN)" >&2; exit 2; }
[ -f "$CONFIG" ] || { echo "d4_per_class: $CONFIG: no such configuration" >&2; exit 2; }
[ "$GENERATIONS" -ge 2 ] || { echo "d4_per_class: BENCH_GENERATIONS must be >= 2 (generation 1 is warm-up)" >&2; exit 2; }
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"

write_config() {  # name classes
  local out="$DIR/$1.yaml"
  local args=(-e "s|^output_dir: .*|output_dir: $DIR/$1|" -e "s|^  generations: .*|  generations: $GENERATIONS|"
              -e "s|^  rows: .*|  rows: $2|")
  [ -n "$BATCHES" ] && args+=(-e "s|^  batches_per_generation: .*|  batches_per_generation: $BATCHES|")
  sed "${args[@]}" "$CONFIG" > "$out"
  grep -q "^  rows: $2\$" "$out" && grep -q "^  generations: $GENERATIONS\$" "$out" \
    || { echo "d4_per_class: could not rewrite $CONFIG (grid.rows / training.generations)" >&2; exit 2; }
}
write_config k2w1 2
write_config k4w2 4

run() {  # name ranks
  local start end
  start=$(date +%s.%N)
  "${MPIEXEC:-mpirun}" $ROOT_FLAG --oversubscribe --bind-to none -np "$2" "$CELLGAN" train "$DIR/$1.yaml" \
    > "$DIR/$1.stdout" 2> "$DIR/$1.stderr" || { tail -5 "$DIR/$1.stderr" >&2; echo "d4_per_class: $1 failed" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$1 $(python3 -c "print(f'{$end - $start:.2f}')")" >> "$DIR/wall.txt"
}
: > "$DIR/wall.txt"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run k2w1 2
run k4w2 3

python3 - "$DIR" "$load_before" "$(cut -d' ' -f1-3 /proc/loadavg)" "$CONFIG" <<'PY' | tee "$DIR/report.md"
import json, re, sys
from collections import defaultdict
d, load_before, load_after, config = sys.argv[1:5]
wall = dict(line.split() for line in open(f"{d}/wall.txt"))

def per_generation(name):
    owner = {}
    for line in open(f"{d}/{name}/events.log"):
        m = re.search(r"assign: worker rank (\d+) <- classes ([\d,]+)$", line.strip())
        if m:
            for c in m.group(2).split(","):
                owner[int(c)] = int(m.group(1))
    busy = defaultdict(float)  # (generation, worker) -> seconds
    for line in open(f"{d}/{name}/metrics.jsonl"):
        r = json.loads(line)
        busy[(r["generation"], owner[r["cell"]])] += sum(r["seconds"].values())
    gens = sorted({g for g, _ in busy})[1:]  # generation 1 is warm-up
    times = [max(s for (g2, _), s in busy.items() if g2 == g) for g in gens]
    return sum(times) / len(times), len(gens)

t1, n1 = per_generation("k2w1")
t2, n2 = per_generation("k4w2")
print(f"D4, per_class weak scaling ({config}); load average {load_before} before, {load_after} after\n")
print("| run | classes | workers | s per generation (busiest worker, mean of {} after warm-up) | wall s |".format(n1))
print("|---|---|---|---|---|")
print(f"| k2w1 | 2 | 1 | {t1:.3f} | {wall['k2w1']} |")
print(f"| k4w2 | 4 | 2 | {t2:.3f} | {wall['k4w2']} |")
print(f"\nweak-scaling efficiency = {t1:.3f} / {t2:.3f} = {100 * t1 / t2:.1f}% (target >= 90%)")
PY
