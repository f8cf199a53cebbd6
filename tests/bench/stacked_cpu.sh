#!/usr/bin/env bash
# Before and after in one run: seconds per cell-generation of
# configs/mnist-2x2.yaml on one worker (W = 1), for two builds of cellgan,
# run alternately (BEFORE, AFTER, BEFORE, AFTER) so that a change in the
# machine's load hits both alike. Generation 1 is warm-up and left out; a
# cell-generation's seconds are its phases but `idle`.
#   BEFORE=/path/to/old/cellgan AFTER=build/app/cellgan bash tests/bench/stacked_cpu.sh
# Environment: BENCH_GENERATIONS (4), BENCH_CONFIG (configs/mnist-2x2.yaml),
# BENCH_ROUNDS (2).
set -euo pipefail
cd "$(dirname "$0")/../.."
BEFORE=${BEFORE:?set BEFORE to the cellgan to compare against}
AFTER=${AFTER:-build/app/cellgan}
GENERATIONS=${BENCH_GENERATIONS:-4}
CONFIG=${BENCH_CONFIG:-configs/mnist-2x2.yaml}
ROUNDS=${BENCH_ROUNDS:-2}
for exe in "$BEFORE" "$AFTER"; do
  [ -x "$exe" ] || { echo "stacked_cpu: $exe: not an executable" >&2; exit 2; }
done
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
DIR=$(mktemp -d /tmp/cellgan-stacked.XXXXXX)
for round in $(seq 1 "$ROUNDS"); do
  for which in before after; do
    exe=$BEFORE; [ "$which" = after ] && exe=$AFTER
    run="$DIR/$which-$round"
    sed -e "s|^output_dir: .*|output_dir: $run|" -e "s|^  generations: .*|  generations: $GENERATIONS|" "$CONFIG" > "$run.yaml"
    mpirun $ROOT_FLAG --oversubscribe --bind-to none -np 2 "$exe" train "$run.yaml" > "$run.out" 2> "$run.log"
  done
done
python3 - "$DIR" "$ROUNDS" <<'PY'
import json, sys
d, rounds = sys.argv[1], int(sys.argv[2])
def per_cell_generation(run):
    total, n = 0.0, 0
    for line in open(f"{run}/metrics.jsonl"):
        r = json.loads(line)
        if r["generation"] == 1:
            continue
        total += sum(v for k, v in r["seconds"].items() if k != "idle")
        n += 1
    return total / n
res = {w: [per_cell_generation(f"{d}/{w}-{i}") for i in range(1, rounds + 1)] for w in ("before", "after")}
for w, v in res.items():
    print(f"{w}: " + ", ".join(f"{x:.3f}" for x in v) + f" s per cell-generation (mean {sum(v)/len(v):.3f})")
b, a = sum(res["before"]) / rounds, sum(res["after"]) / rounds
print(f"after / before: {a / b:.3f}")
PY
echo "runs in $DIR"
