#!/usr/bin/env bash
# cellgan export read back by PyTorch: for a saved ensemble of every network
# kind (mlp, dcgan, sngan, toy, dcgan_conditional, per_class; written by
# export_fixtures) and for a real toy run's ensemble.bin, `cellgan export`
# writes a .pt file, and python/cellgan_ensemble.py, under a python3 with
# PyTorch (Debian's python3-torch), samples it as `cellgan sample` does: the
# same float32 samples to 1e-5 (with and without --class, and the --labels),
# and other samples for another seed (compare_samples.py). Bad input is one
# line, exit 2, and leaves no file (an existing one untouched).
# Prints one line per comparison with its largest difference
# (docs/results.md, X1).
set -euo pipefail
: "${CELLGAN:?CELLGAN must name the cellgan binary}"
: "${FIXTURES:?FIXTURES must name the export_fixtures binary}"
: "${MPIEXEC:=mpirun}"
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1 PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
WORK=$(mktemp -d /tmp/cellgan-export-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A python3 that has PyTorch: $PYTHON, the one on PATH, or Debian's.
python=""
for p in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import torch, numpy' 2>/dev/null; then python=$p; break; fi
done
[ -n "$python" ] || fail "no python3 with PyTorch and NumPy: install python3-torch (deploy/install-deps.sh does)"

"$FIXTURES" "$WORK/fx"
manifest="$WORK/manifest"
: > "$manifest"
# sample CASE N SEED [CLASS [labels]]: cellgan sample of CASE's ensemble, added to the manifest.
sample() {
  local case=$1 n=$2 seed=$3 cls=${4:--} labels=${5:-}
  local out="$WORK/$case-$n-$seed-$cls.npy" args=() labels_out=-
  [ "$cls" = - ] || args+=(--class "$cls")
  if [ -n "$labels" ]; then labels_out="$WORK/$case-$n-$seed-$cls-labels.npy"; args+=(--labels "$labels_out"); fi
  "$CELLGAN" sample --ensemble "$WORK/fx/$case/ensemble.bin" -n "$n" --seed "$seed" --device cpu --out "$out" \
    "${args[@]}" > "$WORK/stdout" 2>&1 || { cat "$WORK/stdout" >&2; fail "cellgan sample of $case failed"; }
  echo "$case $WORK/$case.pt $out $n $seed $cls $labels_out" >> "$manifest"
}
export_case() {
  "$CELLGAN" export --ensemble "$WORK/fx/$1/ensemble.bin" --out "$WORK/$1.pt" > "$WORK/stdout" 2>&1 \
    || { cat "$WORK/stdout" >&2; fail "cellgan export of $1 failed"; }
  grep -q -- "-> $WORK/$1.pt\$" "$WORK/stdout" || { cat "$WORK/stdout" >&2; fail "export of $1: no line naming the file"; }
}

# A real run's ensemble: a short toy run under mpirun (2 generations).
sed -e "s|^output_dir: .*|output_dir: $WORK/run|" -e 's/generations: 4/generations: 2/' \
  "$root/tests/mpi/toy-2x2.yaml" > "$WORK/toy.yaml"
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
timeout -k 10 200 "$MPIEXEC" $ROOT_FLAG --oversubscribe --bind-to none -np 2 "$CELLGAN" train "$WORK/toy.yaml" \
  > "$WORK/stdout" 2>&1 || { cat "$WORK/stdout" >&2; fail "the toy run failed"; }
mkdir -p "$WORK/fx/toy_run" && cp "$WORK/run/ensemble.bin" "$WORK/fx/toy_run/"

for case in mlp dcgan sngan toy dcgan_conditional per_class toy_run; do export_case "$case"; done
grep -q "3 generators (network mlp) ->" <("$CELLGAN" export --ensemble "$WORK/fx/mlp/ensemble.bin" --out "$WORK/again.pt") \
  || fail "export of mlp: expected '3 generators (network mlp)'"
grep -q "4 generators (network mlp, 3 classes) ->" \
  <("$CELLGAN" export --ensemble "$WORK/fx/per_class/ensemble.bin" --out "$WORK/again.pt") \
  || fail "export of per_class: expected '4 generators (network mlp, 3 classes)'"
# mlp and toy: more rows per generator than one chunk of 1,000.
sample mlp 2500 1
sample toy 2500 18446744073709551615
sample toy_run 1200 1
sample dcgan 300 7
sample sngan 200 1
sample dcgan_conditional 200 3
sample dcgan_conditional 100 3 3 labels
sample dcgan_conditional 150 1 - labels
sample per_class 600 5
sample per_class 300 5 1 labels
sample per_class 400 2 - labels
"$python" "$here/compare_samples.py" "$root/python" "$manifest" || fail "python samples differ from cellgan sample"

# Bad input: one line, exit 2, no file written, an existing file untouched.
refused() {  # refused WHAT PATTERN OUT ENSEMBLE [EXIT CODES]
  local what=$1 pattern=$2 out=$3 ensemble=$4 codes=${5:-2} rc=0
  "$CELLGAN" export --ensemble "$ensemble" --out "$out" > "$WORK/stdout" 2>&1 || rc=$?
  [[ " $codes " == *" $rc "* ]] || { cat "$WORK/stdout" >&2; fail "$what: expected exit $codes, got $rc"; }
  [ "$(grep -c . "$WORK/stdout")" -eq 1 ] && grep -q -- "$pattern" "$WORK/stdout" \
    || { cat "$WORK/stdout" >&2; fail "$what: expected one line matching '$pattern'"; }
}
refused "a missing ensemble" "$WORK/none.bin" "$WORK/none.pt" "$WORK/none.bin"
[ ! -e "$WORK/none.pt" ] || fail "a missing ensemble: a file was written"
echo "this text is not an ensemble file at all" > "$WORK/text.bin"
refused "not an ensemble" "text.bin: .*not a cellgan ensemble" "$WORK/text.pt" "$WORK/text.bin"
[ ! -e "$WORK/text.pt" ] || fail "not an ensemble: a file was written"
echo keep > "$WORK/keep.pt"
refused "an existing --out, a bad ensemble" "not a cellgan ensemble" "$WORK/keep.pt" "$WORK/text.bin"
[ "$(cat "$WORK/keep.pt")" = keep ] || fail "a refused export changed the existing --out file"
refused "an --out in no folder" "--out: '$WORK/no/such.pt'" "$WORK/no/such.pt" "$WORK/fx/mlp/ensemble.bin"
# (even for root, whom access(2) lets write anywhere: the folder check makes an entry)
refused "an --out under /proc" "/proc/cellgan.pt" /proc/cellgan.pt "$WORK/fx/mlp/ensemble.bin"
refused "an --out that is not .pt" "expected a .pt file name" "$WORK/x.npy" "$WORK/fx/mlp/ensemble.bin"
[ ! -e "$WORK/x.npy" ] || fail "an --out that is not .pt: a file was written"
mkdir -p "$WORK/bad_index" && cp "$WORK/fx/per_class/ensemble.bin" "$WORK/bad_index/"
echo '{"classes": 2, "proportions": [0.5, 0.5], "generators": [[0, 1], [1, 1]]}' > "$WORK/bad_index/classes.json"
refused "a class index that does not fit" "classes.json: generators:" "$WORK/bad.pt" "$WORK/bad_index/ensemble.bin"
[ ! -e "$WORK/bad.pt" ] || fail "a class index that does not fit: a file was written"
echo "PASS: cellgan export loads in PyTorch and samples as cellgan sample, for every network kind; bad input refused"
