#!/usr/bin/env bash
# Benchmarks D6 and D7 of layout data_parallel on one machine, W = 4 played
# as 2 nodes × 2 ranks (data_parallel.ranks_per_node: 2):
#   D6  hierarchy flat against two_level: worker 1's compute and
#       communication seconds, bytes sent per step, and bytes across nodes
#   D7  shard_optimizer false against true: the Adam moments worker 1 keeps
# Each setting runs BENCH_REPEATS times, alternated; prints a Markdown table.
# Builds nothing; run it on idle cores.
#   CELLGAN (build/app/cellgan), BENCH_CONFIG (configs/dp-mnist-mlp.yaml),
#   BENCH_GENERATIONS (3), BENCH_REPEATS (2), BENCH_DIR (a new /tmp folder),
#   BENCH_ALLREDUCE (ring; mpi sums across the node leaders with MPI_Iallreduce)
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
CONFIG=${BENCH_CONFIG:-configs/dp-mnist-mlp.yaml}
GENERATIONS=${BENCH_GENERATIONS:-3}
REPEATS=${BENCH_REPEATS:-2}
ALLREDUCE=${BENCH_ALLREDUCE:-ring}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/cellgan-d6d7.XXXXXX)}
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG=--allow-run-as-root
for repeat in $(seq "$REPEATS"); do
  for hierarchy in flat two_level; do
    for shard in false true; do
      out="$DIR/$hierarchy-$shard-$repeat"
      mpirun $ROOT_FLAG --oversubscribe --bind-to none -np 5 "$CELLGAN" train "$CONFIG" --set output_dir="$out" \
        --set training.generations="$GENERATIONS" --set data_parallel.hierarchy="$hierarchy" \
        --set data_parallel.allreduce="$ALLREDUCE" \
        --set data_parallel.ranks_per_node=2 --set data_parallel.shard_optimizer="$shard" \
        --set evaluation.preview_every=0 --set evaluation.final_samples=1000 >"$out.log" 2>&1
    done
  done
done
python3 - "$DIR" "$REPEATS" <<'PY'
import json, sys, pathlib
folder, repeats = pathlib.Path(sys.argv[1]), int(sys.argv[2])
print("| hierarchy | shard_optimizer | compute s | communicate s | communication share | bytes sent per step | bytes across nodes per step | Adam moments, worker 1 |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for hierarchy in ("flat", "two_level"):
    for shard in ("false", "true"):
        compute = communicate = 0.0
        for r in range(1, repeats + 1):
            lines = [json.loads(l) for l in open(folder / f"{hierarchy}-{shard}-{r}" / "metrics.jsonl")]
            compute += sum(l["seconds"]["compute"] for l in lines) / repeats
            communicate += sum(l["seconds"]["communicate"] for l in lines) / repeats
        c = lines[-1]["counts"]
        across = c.get("across_node_bytes_per_step")
        print(f"| {hierarchy} | {shard} | {compute:.2f} | {communicate:.2f} | {100 * communicate / (compute + communicate):.0f}% "
              f"| {c['allreduce_bytes_per_step'] / 1e6:.2f} MB | {'' if across is None else f'{across / 1e6:.2f} MB'} "
              f"| {c['adam_state_bytes'] / 1e6:.2f} MB |")
PY
