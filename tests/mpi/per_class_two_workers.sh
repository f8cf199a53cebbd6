#!/usr/bin/env bash
# layout per_class under mpirun: 4 MNIST classes on W = 2 workers (classes
# 0,1 and 2,3) finish with a conditional generator (ensemble.bin +
# classes.json) equal to the one W = 1 gives; `cellgan sample --class C
# --labels` writes C for every sample, without --class the labels follow the
# classes' shares, and a class the run does not have is one line, exit 2.
# Skipped (77) without data/mnist and its classifier (deploy/prepare-data.sh).
source "$(dirname "$0")/mpi_test_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
mnist="$root/data/mnist"
if [ ! -f "$mnist/classifier.pt" ] || [ ! -f "$mnist/train-labels-idx1-ubyte" ]; then
  echo "SKIP: no MNIST with classifier.pt in $mnist"; exit 77
fi
cfg=$(make_config "$root/configs/perclass-mnist.yaml" "$WORK/run" \
  "s|^  dataset: mnist|  dataset: mnist\n  path: $mnist|" 's/kind: dcgan/kind: mlp/' 's/rows: 10 .*/rows: 4/' \
  's/generations: 20/generations: 2/' 's/batches_per_generation: 9 .*/batches_per_generation: 3/' \
  's/final_samples: 10000/final_samples: 400/' 's/score_samples: 500/score_samples: 100/' \
  's/fitness_samples: 500/fitness_samples: 100/' "s|^evaluation:|evaluation:\n  classifier: $mnist/classifier.pt|")
run_cellgan 3 "$cfg" || { cat "$WORK/stderr" >&2; fail "the per_class run with 2 workers exited non-zero"; }
[ "$(wc -l < "$WORK/run/metrics.jsonl")" -eq 8 ] || fail "expected 8 metric lines (4 classes x 2 generations)"
grep -q 'assign: worker rank 1 <- classes 0,1$' "$WORK/run/events.log" \
  && grep -q 'assign: worker rank 2 <- classes 2,3$' "$WORK/run/events.log" \
  || { cat "$WORK/run/events.log" >&2; fail "expected classes 0,1 and 2,3 on the two workers"; }
for f in ensemble.bin classes.json classes.png samples.png result.json; do
  [ -s "$WORK/run/$f" ] || fail "no $f in the run folder"
done
grep -q '"class_accuracy"' "$WORK/run/result.json" || fail "result.json has no class_accuracy"
cfg1=$(make_config "$cfg" "$WORK/one")
run_cellgan 2 "$cfg1" || { cat "$WORK/stderr" >&2; fail "the per_class run with 1 worker exited non-zero"; }
cmp -s "$WORK/run/ensemble.bin" "$WORK/one/ensemble.bin" || fail "conditional generators differ: W=2 vs W=1"
cmp -s "$WORK/run/classes.json" "$WORK/one/classes.json" || fail "classes.json differs: W=2 vs W=1"

# The labels of a .npy file (N x 1 float32) as text, one per line.
labels() {
  python3 - "$1" <<'PY'
import struct, sys
raw = open(sys.argv[1], "rb").read()
header = struct.unpack("<H", raw[8:10])[0]
data = raw[10 + header:]
for (v,) in struct.iter_unpack("<f", data):
    print(int(v))
PY
}
"$CELLGAN" sample --ensemble "$WORK/run/ensemble.bin" --class 2 -n 50 --out "$WORK/c2.npy" --labels "$WORK/c2-labels.npy" \
  > "$WORK/stdout" 2>&1 || { cat "$WORK/stdout" >&2; fail "sample --class 2 failed"; }
[ "$(labels "$WORK/c2-labels.npy" | sort -u)" = "2" ] || fail "sample --class 2 wrote labels other than 2"
[ "$(labels "$WORK/c2-labels.npy" | wc -l)" -eq 50 ] || fail "sample --class 2: expected 50 labels"
"$CELLGAN" sample --ensemble "$WORK/run/ensemble.bin" -n 1000 --out "$WORK/all.png" --labels "$WORK/all-labels.npy" \
  > "$WORK/stdout" 2>&1 || { cat "$WORK/stdout" >&2; fail "sample --labels failed"; }
python3 - "$WORK/run/classes.json" <(labels "$WORK/all-labels.npy") <<'PY' || fail "labels do not follow the classes' shares"
import json, sys
shares = json.load(open(sys.argv[1]))["proportions"]
labels = [int(line) for line in open(sys.argv[2])]
assert len(labels) == 1000, len(labels)
for c, share in enumerate(shares):
    got = labels.count(c) / 1000
    assert abs(got - share) <= 0.001 + 1e-9, (c, got, share)
PY
set +e
"$CELLGAN" sample --ensemble "$WORK/run/ensemble.bin" --class 4 -n 5 --out "$WORK/c4.npy" > "$WORK/stdout" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "sample --class 4 of a 4-class run: expected exit 2, got $rc"
[ "$(grep -c . "$WORK/stdout")" -eq 1 ] && grep -q -- '--class: 4 is out of range: expected 0..3' "$WORK/stdout" \
  || { cat "$WORK/stdout" >&2; fail "sample --class 4: expected one line naming --class and 0..3"; }
[ ! -e "$WORK/c4.npy" ] || fail "sample --class 4 wrote a file"
echo "PASS: per_class with 2 workers equals 1 worker; sample --class and --labels"
