#!/usr/bin/env bash
# A 3x3 run with W = 2 (uneven blocks) finishes with a scored ensemble and
# one metrics line per cell per generation.
source "$(dirname "$0")/mpi_test_lib.sh"
cfg=$(make_config "$(dirname "$0")/toy-2x2.yaml" "$WORK/run" 's/rows: 2, cols: 2/rows: 3, cols: 3/' 's/generations: 4/generations: 2/')
run_cellgan 3 "$cfg" || { cat "$WORK/stderr" >&2; fail "the 3x3 run exited non-zero"; }
[ "$(wc -l < "$WORK/run/metrics.jsonl")" -eq 18 ] || fail "expected 18 metric lines (9 cells x 2 generations)"
grep -q '"best_cell"' "$WORK/run/result.json" || fail "result.json has no best_cell"
grep -q 'best ensemble: cell' "$WORK/stdout" || fail "no score line on stdout"
for c in 0 1 2 3 4 5 6 7 8; do grep -q "\"cell\":$c," "$WORK/run/metrics.jsonl" || fail "no metrics for cell $c"; done
echo "PASS: 3x3 with 2 workers"
