#!/usr/bin/env bash
# Benchmark D5 (seed 002's table) of layout data_parallel: the DCGAN pair of
# configs/dp-fashion-dcgan.yaml under each training option, one run each, in
# sequence: baseline (W = 1), data-parallel W = 2, bf16, accumulation 4,
# clipping (clip_grad_norm 1), ZeRO-1 (W = 2, shard_optimizer). Prints
# seconds per generation (generation 1 left out as warm-up), images per
# second, and the last generation's G and D losses as a Markdown table.
# Builds nothing; run it on idle cores.
#   CELLGAN (build/app/cellgan), BENCH_DATASET (fashion; mnist where the
#   Fashion-MNIST classifier is not prepared), BENCH_GENERATIONS (4),
#   BENCH_BATCHES (50), BENCH_DIR (a new /tmp folder)
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
DATASET=${BENCH_DATASET:-fashion}
GENERATIONS=${BENCH_GENERATIONS:-4}
BATCHES=${BENCH_BATCHES:-50}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/cellgan-d5.XXXXXX)}
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG=--allow-run-as-root
run() {  # NAME WORKERS SETTINGS...
  local name=$1 workers=$2; shift 2
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  mpirun $ROOT_FLAG --oversubscribe --bind-to none -np $((workers + 1)) "$CELLGAN" train configs/dp-fashion-dcgan.yaml \
    --set output_dir="$DIR/$name" --set data.dataset="$DATASET" --set evaluation.classifier="data/$DATASET/classifier.pt" \
    --set training.generations="$GENERATIONS" --set training.batches_per_generation="$BATCHES" \
    --set evaluation.preview_every=0 --set evaluation.final_samples=1000 --set checkpoint.every=0 \
    "${sets[@]}" >"$DIR/$name.log" 2>&1 || { tail -3 "$DIR/$name.log" >&2; exit 1; }
}
run baseline 1 seed=1
run w2 2 seed=1
run bf16 1 training.precision=bf16
run accumulate4 1 data_parallel.accumulate_steps=4
run clipping 1 data_parallel.clip_grad_norm=1
run zero1 2 data_parallel.shard_optimizer=true
python3 - "$DIR" <<'PY'
import json, sys, pathlib
folder = pathlib.Path(sys.argv[1])
print("| option | W | s per generation | images/s | G loss | D loss | Adam moments, worker 1 |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for name, label in [("baseline", "baseline"), ("w2", "data-parallel"), ("bf16", "bf16"),
                    ("accumulate4", "accumulation 4"), ("clipping", "clipping 1.0"), ("zero1", "ZeRO-1")]:
    lines = [json.loads(l) for l in open(folder / name / "metrics.jsonl")][1:]
    seconds = sum(l["seconds"]["compute"] + l["seconds"]["communicate"] for l in lines) / len(lines)
    images = sum(l["counts"]["images_per_second"] for l in lines) / len(lines)
    last = lines[-1]
    print(f"| {label} | {int(last['counts']['workers'])} | {seconds:.2f} | {images:.0f} | {last['generator_loss']:.3f} "
          f"| {last['discriminator_loss']:.3f} | {last['counts']['adam_state_bytes'] / 1e6:.2f} MB |")
PY
