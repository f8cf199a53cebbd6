#!/usr/bin/env bash
# A 3x3 run with W = 2 finishes with a scored ensemble, one metrics line per
# cell per generation, and the grid-wide ensemble scored beside the 9 cell
# ensembles. Its cells go to the workers as row-major strips of 5 and 4 (not
# blocks of 6 and 3), and the result is the one a single worker gives.
# result.json records the BLAS kernels of every rank, as OPENBLAS_CORETYPE
# sets them.
source "$(dirname "$0")/mpi_test_lib.sh"
cfg=$(make_config "$(dirname "$0")/toy-2x2.yaml" "$WORK/run" 's/rows: 2, cols: 2/rows: 3, cols: 3/' 's/generations: 4/generations: 2/')
run_cellgan 3 "$cfg" || { cat "$WORK/stderr" >&2; fail "the 3x3 run exited non-zero"; }
[ "$(wc -l < "$WORK/run/metrics.jsonl")" -eq 18 ] || fail "expected 18 metric lines (9 cells x 2 generations)"
grep -q '"best_cell"' "$WORK/run/result.json" || fail "result.json has no best_cell"
grep -Eq 'best ensemble: (cell [0-8]|grid) \(' "$WORK/stdout" || fail "no score line on stdout"
# The grid-wide ensemble (9 cells' own generators) was scored beside the cells.
[ "$(grep -c '"cell": ' "$WORK/run/result.json")" -eq 9 ] || fail "result.json: expected 9 cell results"
grep -A12 '"grid_ensemble": {' "$WORK/run/result.json" | grep -q '"mode_tvd"' \
  || fail "result.json: no scores of the grid-wide ensemble"
grep -Eq '"best": "(cell [0-8]|grid)"' "$WORK/run/result.json" || fail "result.json: no best ensemble"
grep -q 'grid ensemble (9 generators)' "$WORK/stderr" || fail "the master did not log the grid ensemble's score"
for c in 0 1 2 3 4 5 6 7 8; do grep -q "\"cell\":$c," "$WORK/run/metrics.jsonl" || fail "no metrics for cell $c"; done
grep -q 'assign: worker rank 1 <- cells 0,1,2,3,4$' "$WORK/run/events.log" \
  && grep -q 'assign: worker rank 2 <- cells 5,6,7,8$' "$WORK/run/events.log" \
  || { cat "$WORK/run/events.log" >&2; fail "expected strips of 5 and 4 cells"; }
cfg1=$(make_config "$cfg" "$WORK/one")
run_cellgan 2 "$cfg1" || { cat "$WORK/stderr" >&2; fail "the 3x3 run with one worker exited non-zero"; }
cmp -s <(losses "$WORK/run/metrics.jsonl") <(losses "$WORK/one/metrics.jsonl") || fail "losses differ: W=2 vs W=1"
cmp -s "$WORK/run/ensemble.bin" "$WORK/one/ensemble.bin" || fail "final ensembles differ: W=2 vs W=1"
# result.json and summary.txt record the BLAS kernels of the master and of each worker.
kernels=$(python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["blas_kernels"]; print(k["master"], "|", " | ".join(k["workers"]))' "$WORK/run/result.json")
[[ $kernels =~ ^OpenBLAS\ [A-Za-z0-9]+\ \|\ OpenBLAS\ [A-Za-z0-9]+\ \|\ OpenBLAS\ [A-Za-z0-9]+$ ]] \
  || fail "result.json: expected the kernels of the master and 2 workers, got '$kernels'"
grep -q '^  BLAS         OpenBLAS' "$WORK/run/summary.txt" || fail "summary.txt: no BLAS line"
# OPENBLAS_CORETYPE chooses the kernels, and the record says so.
cfg2=$(make_config "$cfg" "$WORK/prescott")
OPENBLAS_CORETYPE=Prescott run_cellgan 2 "$cfg2" || { cat "$WORK/stderr" >&2; fail "the run with Prescott kernels exited non-zero"; }
grep -q '"master": "OpenBLAS Prescott"' "$WORK/prescott/result.json" \
  && grep -A2 '"workers": \[' "$WORK/prescott/result.json" | grep -q '"OpenBLAS Prescott"' \
  || { grep -A4 blas_kernels "$WORK/prescott/result.json" >&2; fail "result.json does not record OPENBLAS_CORETYPE=Prescott"; }
grep -q 'worker 1 of 1: .* OpenBLAS Prescott kernels' "$WORK/stderr" || fail "the worker did not log its kernels"
# Workers on different kernels: the master warns, in its log and events.log.
cfg3=$(make_config "$cfg" "$WORK/mixed")
# (Both named, as a machine's own choice may be either.)
timeout -k 10 300 "$MPIEXEC" $ROOT_FLAG --oversubscribe --bind-to none -np 2 env OPENBLAS_CORETYPE=Nehalem "$CELLGAN" train "$cfg3" \
  : -np 1 env OPENBLAS_CORETYPE=Prescott "$CELLGAN" train "$cfg3" >"$WORK/stdout" 2>"$WORK/stderr" \
  || { cat "$WORK/stderr" >&2; fail "the run with mixed kernels exited non-zero"; }
grep -q 'WARN .*different BLAS kernels (rank 1: OpenBLAS Nehalem, rank 2: OpenBLAS Prescott)' "$WORK/stderr" \
  && grep -q 'different BLAS kernels' "$WORK/mixed/events.log" \
  || { cat "$WORK/stderr" >&2; fail "no warning about workers on different kernels"; }
echo "PASS: 3x3 with 2 workers (strips of 5 and 4), identical to 1 worker; BLAS kernels recorded"
