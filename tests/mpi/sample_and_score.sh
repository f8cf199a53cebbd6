#!/usr/bin/env bash
# The final ensemble of a run is reloadable: `cellgan sample` writes .npy
# (N x 2 float32) and PNG, `cellgan score` scores both a sample file and the
# ensemble the same way, and a corrupt ensemble is one clear error.
source "$(dirname "$0")/mpi_test_lib.sh"
cfg=$(make_config "$(dirname "$0")/toy-2x2.yaml" "$WORK/run" 's/generations: 4/generations: 2/')
run_cellgan 3 "$cfg" || { cat "$WORK/stderr" >&2; fail "the run failed"; }
E="$WORK/run/ensemble.bin"
"$CELLGAN" sample --ensemble "$E" -n 500 --out "$WORK/s.npy" > /dev/null 2>&1 || fail "sample .npy failed"
# NPY: magic, then a header with the shape; 500 x 2 float32 = 4000 data bytes.
head -c 6 "$WORK/s.npy" | grep -q "NUMPY" || fail "not an .npy file"
head -c 128 "$WORK/s.npy" | grep -q "'shape': (500, 2)" || fail "wrong .npy shape"
size=$(stat -c %s "$WORK/s.npy"); { [ "$size" -gt 4000 ] && [ $(((size - 4000) % 64)) -eq 0 ]; } || fail "wrong .npy size $size"
"$CELLGAN" sample --ensemble "$E" -n 500 --out "$WORK/s.png" > /dev/null 2>&1 || fail "sample .png failed"
head -c 8 "$WORK/s.png" | grep -q "PNG" || fail "not a PNG"
# With the run's configuration the PNG is drawn as the run draws it (the
# mixture's modes marked), so it differs from the same samples drawn without.
"$CELLGAN" sample --ensemble "$E" -n 500 --config "$WORK/run/config.yaml" --out "$WORK/m.png" > /dev/null 2>&1 \
  || fail "sample --config .png failed"
head -c 8 "$WORK/m.png" | grep -q "PNG" || fail "sample --config: not a PNG"
! cmp -s "$WORK/s.png" "$WORK/m.png" || fail "sample --config drew the same PNG as without it"
# A configuration of another kind of data: one line naming the ensemble, exit 2, no file.
rc=0; "$CELLGAN" sample --ensemble "$E" --config "$(dirname "$0")/../../configs/quickstart.yaml" --out "$WORK/q.png" \
  > /dev/null 2> "$WORK/err" || rc=$?
[ "$rc" -eq 2 ] || fail "mismatched --config: expected exit 2, got $rc"
[ "$(wc -l < "$WORK/err")" -eq 1 ] && grep -q "ensemble.bin: the ensemble makes 2-value samples: expected 784" "$WORK/err" \
  || fail "mismatched --config: $(cat "$WORK/err")"
[ ! -e "$WORK/q.png" ] || fail "mismatched --config: a file was written"
# A configuration of another network, or of another toy dataset than the run
# folder's config.yaml records: one line naming what differs, exit 2, no score.
expect_mismatch() {  # NAME PATTERN CMD...
  local name=$1 pattern=$2; shift 2
  local rc=0; "$@" > "$WORK/out" 2> "$WORK/err" || rc=$?
  [ "$rc" -eq 2 ] || fail "$name: expected exit 2, got $rc: $(cat "$WORK/out" "$WORK/err")"
  [ "$(wc -l < "$WORK/err")" -eq 1 ] && grep -q -- "$pattern" "$WORK/err" || fail "$name: $(cat "$WORK/err")"
  [ ! -s "$WORK/out" ] || fail "$name: printed $(cat "$WORK/out")"
}
sed 's/toy_hidden: 32/toy_hidden: 64/; s/latent_dim: 8/latent_dim: 4/' "$WORK/run/config.yaml" > "$WORK/other-net.yaml"
expect_mismatch score-other-network \
  "ensemble.bin: the ensemble's generators are not the network of $WORK/other-net.yaml (network.latent_dim 8 vs 4, network.toy_hidden 32 vs 64: the ensemble's vs the configuration's)" \
  "$CELLGAN" score --config "$WORK/other-net.yaml" --ensemble "$E"
sed 's/dataset: ring/dataset: grid/' "$WORK/run/config.yaml" > "$WORK/other-data.yaml"
expect_mismatch score-other-dataset \
  "ensemble.bin: the ensemble was trained on data.dataset ring ($WORK/run/config.yaml), $WORK/other-data.yaml has grid" \
  "$CELLGAN" score --config "$WORK/other-data.yaml" --ensemble "$E"
expect_mismatch sample-other-dataset "the ensemble was trained on data.dataset ring" \
  "$CELLGAN" sample --ensemble "$E" --config "$WORK/other-data.yaml" --out "$WORK/g.png"
[ ! -e "$WORK/g.png" ] || fail "sample-other-dataset: a file was written"
# Scoring the ensemble's own samples through both paths gives the same numbers.
a=$("$CELLGAN" score --config "$WORK/run/config.yaml" --samples "$WORK/s.npy" 2>/dev/null)
"$CELLGAN" sample --ensemble "$E" -n 500 --seed 9 --out "$WORK/s9.npy" > /dev/null 2>&1
b=$("$CELLGAN" score --config "$WORK/run/config.yaml" --samples "$WORK/s9.npy" 2>/dev/null)
echo "$a" | grep -q "modes_covered" || fail "score printed no mode metrics: $a"
[ "$a" != "$b" ] || fail "different seeds gave identical scores"
c=$("$CELLGAN" score --config "$WORK/run/config.yaml" --ensemble "$E" -n 1000 2>/dev/null)
echo "$c" | grep -q "^1000 samples (--count 1000, --seed 7: the configuration.s):" || fail "score --ensemble: $c"
# By default an ensemble is scored as its run scored it (its final_samples,
# its seed): the same scores as result.json's for the best ensemble.
d=$("$CELLGAN" score --config "$WORK/run/config.yaml" --ensemble "$E" 2>/dev/null)
want=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("%.4f" % r["scores"]["mode_tvd"])' "$WORK/run/result.json")
echo "$d" | grep -q "^1000 samples (--count 1000: evaluation.final_samples, --seed 7: the configuration's):.* mode_tvd $want" \
  || fail "score with the run's defaults: '$d', expected mode_tvd $want as in result.json"
# Fewer than 2 samples cannot be scored: the user's input (exit 2), not an internal error.
"$CELLGAN" sample --ensemble "$E" -n 1 --out "$WORK/one.npy" > /dev/null 2>&1 || fail "sample -n 1 failed"
rc=0; "$CELLGAN" score --config "$WORK/run/config.yaml" --samples "$WORK/one.npy" > /dev/null 2> "$WORK/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "one.npy: shape (1, 2): expected at least 2 samples" "$WORK/err" \
  || fail "score of 1 sample: exit $rc, $(cat "$WORK/err")"
rc=0; "$CELLGAN" score --config "$WORK/run/config.yaml" --ensemble "$E" -n 1 > /dev/null 2> "$WORK/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "count: 1 is out of range: expected 2\.\." "$WORK/err" || fail "score -n 1: exit $rc, $(cat "$WORK/err")"
# Corrupt ensemble: one error line naming the file, exit 2.
cp "$E" "$WORK/bad.bin"; printf 'xxxx' | dd of="$WORK/bad.bin" bs=1 seek=200 conv=notrunc 2>/dev/null
rc=0; "$CELLGAN" sample --ensemble "$WORK/bad.bin" --out "$WORK/x.npy" > /dev/null 2> "$WORK/err" || rc=$?
[ "$rc" -eq 2 ] || fail "corrupt ensemble: expected exit 2, got $rc"
grep -q "bad.bin: checksum mismatch" "$WORK/err" || fail "corrupt ensemble: $(cat "$WORK/err")"
[ ! -e "$WORK/x.npy" ] || fail "a partial output was left"
echo "PASS: sample and score"
