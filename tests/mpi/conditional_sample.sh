#!/usr/bin/env bash
# cellgan sample with a class, for the DC-CGAN baseline (dcgan_conditional):
# a short run under mpirun, then `sample --class 3 --labels` writes class 3
# for every sample, `sample --labels` the classes its latent draws give (some
# of 0..9), and `--class` on an ensemble that is not conditional (no
# classes.json, not dcgan_conditional) is one line naming classes.json, exit 2;
# `score --class C` gives shares that add up to 1 over the classes, and is
# refused for toy data.
# Skipped (77) without data/mnist and its classifier (deploy/prepare-data.sh).
source "$(dirname "$0")/mpi_test_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
mnist="$root/data/mnist"
if [ ! -f "$mnist/classifier.pt" ] || [ ! -f "$mnist/train-labels-idx1-ubyte" ]; then
  echo "SKIP: no MNIST with classifier.pt in $mnist"; exit 77
fi
cfg=$(make_config "$root/configs/cgan-mnist.yaml" "$WORK/run" "s|^  dataset: mnist|  dataset: mnist\n  path: $mnist|" \
  's/generations: 20/generations: 1/' 's/batches_per_generation: 90 .*/batches_per_generation: 2/' \
  's/final_samples: 10000/final_samples: 200/' 's/score_samples: 500/score_samples: 50/' \
  's/fitness_samples: 500/fitness_samples: 50/' "s|^evaluation:|evaluation:\n  classifier: $mnist/classifier.pt|")
run_cellgan 2 "$cfg" || { cat "$WORK/stderr" >&2; fail "the dcgan_conditional run exited non-zero"; }
labels() {
  python3 - "$1" <<'PY'
import struct, sys
raw = open(sys.argv[1], "rb").read()
header = struct.unpack("<H", raw[8:10])[0]
for (v,) in struct.iter_unpack("<f", raw[10 + header:]):
    print(int(v))
PY
}
"$CELLGAN" sample --ensemble "$WORK/run/ensemble.bin" --class 3 -n 40 --out "$WORK/c3.png" --labels "$WORK/c3.npy" \
  > "$WORK/stdout" 2>&1 || { cat "$WORK/stdout" >&2; fail "sample --class 3 failed"; }
[ "$(labels "$WORK/c3.npy" | sort -u)" = "3" ] && [ "$(labels "$WORK/c3.npy" | wc -l)" -eq 40 ] \
  || fail "sample --class 3: expected 40 labels, all 3"
"$CELLGAN" sample --ensemble "$WORK/run/ensemble.bin" -n 200 --out "$WORK/all.npy" --labels "$WORK/all-labels.npy" \
  > "$WORK/stdout" 2>&1 || { cat "$WORK/stdout" >&2; fail "sample --labels failed"; }
[ "$(labels "$WORK/all-labels.npy" | sort -u | wc -l)" -ge 5 ] || fail "sample --labels: expected several classes"
[ "$(labels "$WORK/all-labels.npy" | sort -un | tail -1)" -le 9 ] || fail "sample --labels: a class above 9"
# score --class C: the share of the samples the classifier labels C; over
# C = 0..9 the shares of the same samples add up to 1.
"$CELLGAN" sample --ensemble "$WORK/run/ensemble.bin" -n 100 --out "$WORK/s100.npy" > /dev/null 2>&1 \
  || fail "sample of 100 .npy failed"
total=0
for c in 0 1 2 3 4 5 6 7 8 9; do
  line=$("$CELLGAN" score --config "$WORK/run/config.yaml" --samples "$WORK/s100.npy" --class "$c" 2>/dev/null) \
    || fail "score --class $c failed"
  acc=$(sed -n 's/.*  class_accuracy \([0-9.]*\)$/\1/p' <<< "$line")
  [ -n "$acc" ] || fail "score --class $c: no class_accuracy in: $line"
  total=$(awk -v t="$total" -v a="$acc" 'BEGIN { print t + a }')
done
awk -v t="$total" 'BEGIN { exit !(t > 0.999 && t < 1.001) }' || fail "score --class: the shares add up to $total, not 1"
set +e
"$CELLGAN" score --config "$(dirname "$0")/toy-2x2.yaml" --samples "$WORK/s100.npy" --class 1 > "$WORK/stdout" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] && [ "$(grep -c . "$WORK/stdout")" -eq 1 ] && grep -q 'has no classes' "$WORK/stdout" \
  || { cat "$WORK/stdout" >&2; fail "score --class on toy data: expected one line and exit 2, got $rc"; }
# An unconditional run's ensemble has no classes.
cfg2=$(make_config "$cfg" "$WORK/plain" 's/kind: dcgan_conditional/kind: dcgan/')
run_cellgan 2 "$cfg2" || { cat "$WORK/stderr" >&2; fail "the dcgan run exited non-zero"; }
set +e
"$CELLGAN" sample --ensemble "$WORK/plain/ensemble.bin" --class 1 -n 5 --out "$WORK/p.npy" > "$WORK/stdout" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "sample --class of an unconditional ensemble: expected exit 2, got $rc"
[ "$(grep -c . "$WORK/stdout")" -eq 1 ] && grep -q 'classes.json' "$WORK/stdout" \
  || { cat "$WORK/stdout" >&2; fail "expected one line naming classes.json"; }
[ ! -e "$WORK/p.npy" ] || fail "a file was written"
echo "PASS: sample --class and --labels of a dcgan_conditional run; score --class; refused for an unconditional one"
