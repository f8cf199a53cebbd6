#!/usr/bin/env bash
# Q3: the three ways of training compared at an equal number of generator
# steps (tests/bench/README.md). For each dataset (MNIST, Fashion-MNIST):
#   dcgan      the single unconditional DC-GAN   configs/dcgan-mnist.yaml
#   cgan       the single conditional DC-CGAN    configs/cgan-mnist.yaml
#   per_class  one DC-GAN per class              configs/perclass-<dataset>.yaml
#   dp         data-parallel DCGAN, W = 2        configs/dp-fashion-dcgan.yaml
#   coev-2x2   coevolution of DCGANs on a 2x2 grid  configs/mnist-2x2.yaml
# Every generator takes Q3_GENERATIONS x Q3_BATCHES Adam steps on batches of
# 100 images (the data-parallel pair: global batches of 100, strong scaling;
# each class's and each cell's generator: that many steps of its own), and
# every discriminator steps on every batch. Each run's generator is then
# scored by `cellgan score` (FID, TVD, IS from the project's classifier,
# 10,000 samples, latent seed 1); the conditional ones also per class
# (`cellgan sample --class C`, 1,000 samples each, class_accuracy). One row
# of 10 samples per method goes into q3-<dataset>.png.
#
# Output: $Q3_DIR (runs/q3)/<dataset>-<method>/, scores.tsv and the
# Markdown table report.md. Finished runs are kept when run again.
# Two runs go at a time on the 2 cores (the dp run takes both).
# Environment: CELLGAN, SAMPLE_ROWS (bench_sample_rows), Q3_DIR,
# Q3_GENERATIONS (6), Q3_BATCHES (100), Q3_DATASETS ("mnist fashion").
# A check of the script: Q3_GENERATIONS=1 Q3_BATCHES=2 Q3_DIR=/tmp/q3-check.
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=${CELLGAN:-build/app/cellgan}
SAMPLE_ROWS=${SAMPLE_ROWS:-build/tests/bench/bench_sample_rows}
DIR=${Q3_DIR:-runs/q3}
G=${Q3_GENERATIONS:-6}
B=${Q3_BATCHES:-100}
DATASETS=${Q3_DATASETS:-mnist fashion}
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
for bin in "$CELLGAN" "$SAMPLE_ROWS"; do
  [ -x "$bin" ] || { echo "q3: $bin: not an executable (build first, or set CELLGAN / SAMPLE_ROWS)" >&2; exit 2; }
done
mkdir -p "$DIR"

# settings DATASET: the --set options every run of that dataset shares.
settings() {
  local s="training.generations=$G training.batches_per_generation=$B training.batch_size=100"
  s+=" training.discriminator_skip=0 evaluation.final_samples=10000"
  s+=" data.dataset=$1 evaluation.classifier=data/$1/classifier.pt"
  echo "$s"
}

# method_of NAME -> "CONFIG NP EXTRA-SETTINGS"
method_of() {
  case $1 in
    dcgan)     echo "configs/dcgan-mnist.yaml 2" ;;
    cgan)      echo "configs/cgan-mnist.yaml 2" ;;
    per_class) echo "configs/perclass-DATASET.yaml 3" ;;
    dp)        echo "configs/dp-fashion-dcgan.yaml 3 data_parallel.scaling=strong" ;;
    coev-2x2)  echo "configs/mnist-2x2.yaml 3 network.kind=dcgan" ;;
  esac
}
METHODS="dcgan cgan per_class dp coev-2x2"

run_one() {
  local dataset=$1 method=$2 name="$1-$2"
  local out="$DIR/$name"
  [ -f "$out/result.json" ] && { echo "q3: $name already done"; return 0; }
  rm -rf "$out"
  read -r config np extra <<< "$(method_of "$method")"
  config=${config/DATASET/$dataset}
  local sets=()
  for kv in $(settings "$dataset") $extra; do
    sets+=(--set "$kv")
  done
  sets+=(--set "output_dir=$out")
  echo "q3: $name started $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
  local began=$SECONDS
  if ! mpirun $ROOT_FLAG --oversubscribe --bind-to none -np "$np" "$CELLGAN" train "$config" "${sets[@]}" \
      > "$DIR/$name.out" 2> "$DIR/$name.log"; then
    echo "q3: $name FAILED (see $DIR/$name.log)"; tail -3 "$DIR/$name.log"; return 1
  fi
  echo "$((SECONDS - began))" > "$out/q3-seconds"
  echo "q3: $name done $(date +%T) in $((SECONDS - began)) s"
}
export -f run_one method_of settings
export CELLGAN ROOT_FLAG DIR G B

jobs=()
for d in $DATASETS; do for m in $METHODS; do jobs+=("$d $m"); done; done
# The dp runs use both cores: alone, after the others.
printf '%s\n' "${jobs[@]}" | grep -v ' dp$' | xargs -P 2 -L 1 bash -c 'run_one "$0" "$1"' || true
printf '%s\n' "${jobs[@]}" | grep ' dp$' | xargs -P 1 -L 1 bash -c 'run_one "$0" "$1"' || true

# Scores, per-class accuracy and the picture.
tsv="$DIR/scores.tsv"
printf 'dataset\tmethod\tgenerator_steps\twall_s\tfid\ttvd\tis\tclass_accuracy\tper_class_accuracy\n' > "$tsv"
for d in $DATASETS; do
  rows=()
  for m in $METHODS; do
    out="$DIR/$d-$m"
    [ -f "$out/result.json" ] || { printf '%s\t%s\t\t\tfailed\n' "$d" "$m" >> "$tsv"; continue; }
    line=$("$CELLGAN" score --config "$out/config.yaml" --ensemble "$out/ensemble.bin" -n 10000 2>> "$DIR/score.log")
    val() { sed -n "s/.*  $1 \([-0-9.eE+naif]*\).*/\1/p" <<< "$line"; }
    acc=""; per=""
    if [ "$m" = cgan ] || [ "$m" = per_class ]; then
      total=0
      for c in 0 1 2 3 4 5 6 7 8 9; do
        "$CELLGAN" sample --ensemble "$out/ensemble.bin" --class "$c" -n 1000 --seed 3 --out "$out/class-$c.npy" \
          > /dev/null 2>> "$DIR/score.log"
        a=$("$CELLGAN" score --config "$out/config.yaml" --samples "$out/class-$c.npy" --class "$c" \
            2>> "$DIR/score.log" | sed -n 's/.*class_accuracy \([0-9.]*\).*/\1/p')
        per+="${per:+ }$c:$a"
        total=$(awk -v t="$total" -v a="$a" 'BEGIN { print t + a }')
      done
      acc=$(awk -v t="$total" 'BEGIN { printf "%.4f", t / 10 }')
    fi
    "$CELLGAN" sample --ensemble "$out/ensemble.bin" -n 10 --seed 2 --out "$out/row.npy" > /dev/null 2>> "$DIR/score.log"
    rows+=("$out/row.npy")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$d" "$m" "$((G * B))" "$(cat "$out/q3-seconds")" \
      "$(val fid)" "$(val tvd)" "$(val is)" "$acc" "$per" >> "$tsv"
  done
  [ "${#rows[@]}" -gt 0 ] && "$SAMPLE_ROWS" "$DIR/q3-$d.png" 10 "${rows[@]}"
done

{
  echo "| dataset | method | generator steps | wall s | FID | TVD | IS | class accuracy |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|"
  tail -n +2 "$tsv" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, ($8 == "" ? "-" : $8) }'
  echo
  echo "Per-class accuracy (\`sample --class C\`, 1,000 samples, the classifier's label):"
  echo
  tail -n +2 "$tsv" | awk -F'\t' '$9 != "" { printf "- %s %s: %s\n", $1, $2, $9 }'
  echo
  echo "Rows of q3-<dataset>.png, top to bottom: $METHODS."
} > "$DIR/report.md"
cat "$DIR/report.md"
