#!/usr/bin/env bash
# cellgan sweep end to end on a toy ring: 1x1 and 2x2 with W = 1, 2 and one
# seed (1x1 with W = 2 is skipped).
#  1. The sweep is interrupted (SIGINT) during its second run: it stops the
#     run with a checkpoint and exits 75; the first run is finished.
#  2. Run again: the finished run is kept untouched (same result.json), the
#     interrupted one resumes from its checkpoint, the last one runs.
#  3. The outputs: sweep.csv has one row per finished run, W = 1 has a
#     speed-up of 1, the plots are PNGs, sweep.md embeds them.
#  4. --collect on the runs gives the same rows.
#  5. Runs that fail are reported, the sweep goes on and exits 1.
#  6. Bad options: one line, exit 2, nothing written.
#  7. --vary: any key, crossed with the rest: a column and vary.png, and
#     the terminal and sweep.md say the same counts.
set -euo pipefail
: "${CELLGAN:?CELLGAN must name the cellgan binary}"
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
WORK=$(mktemp -d /tmp/cellgan-sweep-test.XXXXXX)
SWEEP_PID=""
cleanup() { [ -n "$SWEEP_PID" ] && kill "$SWEEP_PID" 2>/dev/null; [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
CONFIG="$(dirname "$0")/toy-sweep.yaml"
OUT="$WORK/sweep"
ARGS=(sweep --config "$CONFIG" --grids 1x1,2x2 --workers 1,2 --seeds 1 --out "$OUT")

# 1. Interrupted during the second run (2x2, W = 1), once it has a checkpoint.
"$CELLGAN" "${ARGS[@]}" >"$WORK/first.out" 2>"$WORK/first.err" &
SWEEP_PID=$!
SECOND="$OUT/runs/g2x2-w1-s3"
for _ in $(seq 1 600); do
  [ -d "$SECOND/checkpoints" ] && ls "$SECOND/checkpoints" | grep -q . && break
  kill -0 "$SWEEP_PID" 2>/dev/null || break
  sleep 0.1
done
kill -INT "$SWEEP_PID"
set +e; wait "$SWEEP_PID"; rc=$?; set -e
SWEEP_PID=""
[ "$rc" -eq 75 ] || { cat "$WORK/first.err" >&2; fail "the interrupted sweep exited $rc, expected 75"; }
[ -f "$OUT/runs/g1x1-w1-s3/result.json" ] || fail "the first run did not finish"
[ -f "$SECOND/result.json" ] && fail "the second run finished: it was not interrupted"
[ -d "$OUT/runs/g2x2-w2-s3" ] && fail "a run started after the interrupt"
grep -q "skipped: 2 worker ranks do not fit a 1x1 grid" "$WORK/first.err" || fail "no line says why 1x1 with W = 2 is skipped"
grep -q "interrupted" "$WORK/first.err" || fail "the progress says nothing of the interrupt"
first_result=$(sha256sum < "$OUT/runs/g1x1-w1-s3/result.json")

# 2. Run again.
"$CELLGAN" "${ARGS[@]}" >"$WORK/second.out" 2>"$WORK/second.err" ||
  { cat "$WORK/second.err" >&2; fail "the second sweep failed"; }
grep -q "grid 1x1, W 1, seed 3: finished before, kept" "$WORK/second.err" || fail "the finished run was not kept"
grep -q "grid 2x2, W 1, seed 3: resuming" "$WORK/second.err" || fail "the interrupted run did not resume"
[ "$(sha256sum < "$OUT/runs/g1x1-w1-s3/result.json")" = "$first_result" ] || fail "the kept run's result.json changed"
grep -q "resum" "$SECOND/events.log" || fail "the second run's events.log says nothing of a resume"
for run in g1x1-w1-s3 g2x2-w1-s3 g2x2-w2-s3; do
  [ -f "$OUT/runs/$run/result.json" ] || fail "$run did not finish"
done
cells_times_gens=$((4 * 30))
[ "$(wc -l < "$SECOND/metrics.jsonl")" -eq "$cells_times_gens" ] || fail "the resumed run's metrics.jsonl is not 120 lines"
# The resumed run ends like an uninterrupted one: W = 2 (never interrupted)
# gives the same ensemble (the result does not depend on W).
cmp -s "$SECOND/ensemble.bin" "$OUT/runs/g2x2-w2-s3/ensemble.bin" || fail "the resumed run's ensemble differs from W = 2's"

# 3. The outputs.
csv="$OUT/sweep.csv"
[ "$(wc -l < "$csv")" -eq 4 ] || { cat "$csv" >&2; fail "sweep.csv: expected a header and 3 rows"; }
head -1 "$csv" | grep -q "^grid,rows,cols,cells,workers,seed,generations,s_per_generation,total_s,speedup,efficiency,compute_s,comm_s,comm_share,.*modes_covered" ||
  fail "sweep.csv: unexpected header: $(head -1 "$csv")"
awk -F, 'NR > 1 && $5 == 1 && ($10 != "1.000" || $11 != "1.000") { bad = 1 } END { exit bad }' "$csv" ||
  fail "a W = 1 row has a speed-up other than 1"
awk -F, 'NR > 1 && $5 == 2 && ($10 == "" || $10 <= 0) { bad = 1 } END { exit bad }' "$csv" || fail "W = 2 has no speed-up"
awk -F, 'NR > 1 && ($8 <= 0 || $14 < 0 || $14 > 1) { bad = 1 } END { exit bad }' "$csv" || fail "bad times or shares"
for png in time speedup score phases; do
  f="$OUT/$png.png"
  [ -s "$f" ] || fail "$png.png is missing or empty"
  [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$png.png is not a PNG"
  grep -q "($png.png)" "$OUT/sweep.md" || fail "sweep.md does not embed $png.png"
done
grep -q "Skipped" "$OUT/sweep.md" || fail "sweep.md does not list the skipped run"

# 4. --collect on the same run folders: the same rows.
"$CELLGAN" sweep --collect "$OUT/runs" --out "$WORK/collected" >"$WORK/collect.out" 2>&1 ||
  { cat "$WORK/collect.out" >&2; fail "--collect failed"; }
cmp -s "$csv" "$WORK/collected/sweep.csv" || { diff "$csv" "$WORK/collected/sweep.csv" >&2; fail "--collect gave other rows"; }
[ -s "$WORK/collected/phases.png" ] || fail "--collect drew no plots"

# 5. Failed runs are reported, with the line that says why, and the sweep
# goes on: a launcher that fails as cellgan does.
printf '#!/bin/sh\necho "cellgan: error: base.yaml: training.x: broken on purpose" >&2\nexit 1\n' > "$WORK/failer"
chmod +x "$WORK/failer"
set +e
CELLGAN_MPIRUN="$WORK/failer" "$CELLGAN" sweep --config "$CONFIG" --grids 1x1,2x2 --workers 1 --out "$WORK/failing" \
  >"$WORK/failing.out" 2>"$WORK/failing.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "a sweep whose runs fail exited $rc, expected 1"
[ "$(grep -c "failed after" "$WORK/failing.err")" -eq 2 ] || fail "expected both failed runs reported: $(cat "$WORK/failing.err")"
grep -q "failed: g2x2-w1-s3: exit 1: base.yaml: training.x: broken on purpose (see logs/" "$WORK/failing.out" \
  || fail "the summary does not name the failed run and why: $(cat "$WORK/failing.out")"
grep -q -A3 "^Failed" "$WORK/failing/sweep.md" || fail "sweep.md does not list the failed runs"

# 6. Bad options: one line naming the flag, exit 2, nothing written.
bad() {  # expected-word args...
  local word=$1; shift
  set +e; "$CELLGAN" sweep "$@" --out "$WORK/bad" >"$WORK/bad.out" 2>"$WORK/bad.err"; local rc=$?; set -e
  [ "$rc" -eq 2 ] || fail "sweep $* exited $rc, expected 2"
  [ "$(wc -l < "$WORK/bad.err")" -eq 1 ] || { cat "$WORK/bad.err" >&2; fail "sweep $*: expected one line"; }
  grep -q -- "$word" "$WORK/bad.err" || fail "sweep $*: the line does not name $word: $(cat "$WORK/bad.err")"
  [ -e "$WORK/bad" ] && fail "sweep $* wrote $WORK/bad"
  return 0
}
bad "--grids" --config "$CONFIG" --grids 2y2 --workers 1
bad "--workers" --config "$CONFIG" --grids 2x2 --workers 0
bad "no-such.yaml" --config "$WORK/no-such.yaml" --grids 2x2 --workers 1
bad "--config" --grids 2x2 --workers 1
bad "--collect" --collect "$WORK/nowhere"
bad "--set seed=4" --config "$CONFIG" --grids 2x2 --workers 1 --set seed=4
bad "--vary" --config "$CONFIG" --vary training.batch_size
bad "nothing to sweep" --config "$CONFIG"
bad "every run is refused" --config "$CONFIG" --vary training.nonsense=1,2

# 7. --vary.
"$CELLGAN" sweep --config "$CONFIG" --vary training.batch_size=32,64 --set training.generations=4 \
  --out "$WORK/vary" >"$WORK/vary.out" 2>"$WORK/vary.err" || { cat "$WORK/vary.err" >&2; fail "the --vary sweep failed"; }
for run in g1x1-w1-s3-batch_size32 g1x1-w1-s3-batch_size64; do
  [ -f "$WORK/vary/runs/$run/result.json" ] || fail "--vary: $run did not finish"
done
head -1 "$WORK/vary/sweep.csv" | grep -q ",layout,training.batch_size,overlaps," || fail "--vary: no column: $(head -1 "$WORK/vary/sweep.csv")"
[ "$(cut -d, -f16 "$WORK/vary/sweep.csv" | tail -n +2 | sort -n | tr '\n' ' ')" = "32 64 " ] || fail "--vary: the values $(cat "$WORK/vary/sweep.csv")"
[ -s "$WORK/vary/vary.png" ] && grep -q "(vary.png)" "$WORK/vary/sweep.md" || fail "--vary: no vary.png in sweep.md"
# The same --out with other settings: refused before anything runs, naming
# the run and the key, instead of keeping runs this command did not make.
set +e; "$CELLGAN" sweep --config "$CONFIG" --vary training.batch_size=32,64 --set training.generations=5 \
  --out "$WORK/vary" >"$WORK/other.out" 2>"$WORK/other.err"; rc=$?; set -e
[ "$rc" -eq 2 ] || { cat "$WORK/other.err" >&2; fail "other settings in the same --out: exit $rc, expected 2"; }
grep -q "the run g1x1-w1-s3-batch_size32 there was made otherwise (training.generations: 4 in the run, 5 in this sweep)" \
  "$WORK/other.err" || fail "other settings: $(cat "$WORK/other.err")"
# A value no run can take is refused at once; a folder without runs collects nothing.
bad "training.batch_size=0: refused in every run" --config "$CONFIG" --vary training.batch_size=32,0
mkdir -p "$WORK/empty"
bad "holds no run folder" --collect "$WORK/empty"
set +e; "$CELLGAN" sweep --collect "$WORK/empty" >/dev/null 2>&1; rc=$?; set -e
[ "$rc" -eq 2 ] || fail "--collect of an empty folder, its own --out: exit $rc, expected 2"
[ -z "$(ls -A "$WORK/empty")" ] || fail "--collect of an empty folder wrote $(ls "$WORK/empty")"
grep -q "^sweep: 2 finished runs: table" "$WORK/vary.out" && grep -q "^2 finished runs\." "$WORK/vary/sweep.md" ||
  fail "--vary: the terminal and sweep.md disagree: $(cat "$WORK/vary.out")"
echo "PASS: interrupted and resumed, finished runs kept, outputs consistent, --collect the same, bad options rejected, --vary"
