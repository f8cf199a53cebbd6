#!/usr/bin/env bash
# training.precision bf16 in the coevolution layout (the cells' stacked
# steps under autocast) on the toy 2x2: the run finishes, result.json says
# bf16, every loss is finite, the mean of the cells' scores improves from
# the first generation to the last, and W = 1 and W = 2 give the same
# ensemble to the bit; fp16 on the CPU is refused in one line, with nothing
# written.
source "$(dirname "$0")/mpi_test_lib.sh"
SRC="$(dirname "$0")/toy-2x2.yaml"
for w in 1 2; do
  cfg=$(make_config "$SRC" "$WORK/bf16-w$w" 's/generations: 4/generations: 6/' 's/batches_per_generation: 20/batches_per_generation: 100/' 's/final_samples: 1000}/final_samples: 1000, preview_every: 1}/' \
    's/learning_rate: 1.0e-3}/learning_rate: 1.0e-3, precision: bf16}/')
  run_cellgan $((w + 1)) "$cfg" || { cat "$WORK/stderr" >&2; fail "bf16 on W = $w exited non-zero"; }
done
grep -q '"precision": "bf16"' "$WORK/bf16-w1/result.json" || fail "result.json does not say bf16"
if losses "$WORK/bf16-w1/metrics.jsonl" | grep -Eqi 'nan|inf|null'; then fail "bf16: a loss that is not finite"; fi
cmp -s "$WORK/bf16-w1/ensemble.bin" "$WORK/bf16-w2/ensemble.bin" || fail "bf16: W = 1 and W = 2 differ"
python3 - "$WORK/bf16-w1/metrics.jsonl" <<'PY' || fail "bf16: the cells' score did not improve"
import json, sys
by_generation = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("scores") and r["scores"].get("frechet_2d") is not None:
        by_generation.setdefault(r["generation"], []).append(r["scores"]["frechet_2d"])
first, last = min(by_generation), max(by_generation)
mean = lambda g: sum(by_generation[g]) / len(by_generation[g])
print(f"frechet_2d: generation {first} {mean(first):.3f}, generation {last} {mean(last):.3f}")
sys.exit(0 if last > first and mean(last) < mean(first) else 1)
PY
cfg=$(make_config "$SRC" "$WORK/fp16" 's/learning_rate: 1.0e-3}/learning_rate: 1.0e-3, precision: fp16}/')
if run_cellgan 2 "$cfg"; then fail "fp16 on the CPU was accepted"; fi
grep -q "training.precision: fp16 needs a GPU" "$WORK/stderr" || { cat "$WORK/stderr" >&2; fail "fp16: no one-line refusal"; }
[ ! -e "$WORK/fp16/metrics.jsonl" ] || fail "fp16: a refused run left metrics.jsonl"
echo "PASS: bf16 trains the toy 2x2 with finite losses and a better score, the same on 1 and 2 workers; fp16 is refused on the CPU"
