#!/usr/bin/env bash
# grid.exchange: async. With one worker there is no other worker to hear
# from, so it is sync to the bit. With two workers and one of them slowed
# (fault delay), sync makes the other wait for it every generation, and
# async (with a lag that lets it run ahead) does not: the fast worker's
# idle time falls to a small part of sync's, the run still ends with every
# cell's records and a scored ensemble, and events.log says the result
# depends on timing. With async_lag 1 the fast worker stays close to the
# slow one, so a stop asked for mid-run stops the run soon after.
source "$(dirname "$0")/mpi_test_lib.sh"
SRC="$(dirname "$0")/toy-2x2.yaml"

sync1=$(make_config "$SRC" "$WORK/sync1")
async1=$(make_config "$SRC" "$WORK/async1" 's/^grid: {rows: 2, cols: 2}/grid: {rows: 2, cols: 2, exchange: async}/')
grep -q 'exchange: async' "$async1" || fail "the async configuration was not written"
run_cellgan 2 "$sync1" || { cat "$WORK/stderr" >&2; fail "sync, W=1: exit non-zero"; }
run_cellgan 2 "$async1" || { cat "$WORK/stderr" >&2; fail "async, W=1: exit non-zero"; }
cmp -s "$WORK/sync1/ensemble.bin" "$WORK/async1/ensemble.bin" || fail "async with one worker differs from sync"
grep -q 'exchange async' "$WORK/async1/events.log" && fail "a one-worker run cannot depend on timing, yet events.log says so"

# Idle seconds of worker rank 1's cells (0 and 1: rows of the 2x2), over the generations after the first.
idle_of_rank1() {
  python3 - "$1" <<'EOF'
import json, sys
total = 0.0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["cell"] in (0, 1) and r["generation"] > 1:
        total += r["seconds"]["idle"]
print(f"{total:.4f}")
EOF
}
slow='s/^training: {generations: 4,/training: {generations: 6,/'
syncd=$(make_config "$SRC" "$WORK/sync2" "$slow")
asyncd=$(make_config "$SRC" "$WORK/async2" "$slow" 's/^grid: {rows: 2, cols: 2}/grid: {rows: 2, cols: 2, exchange: async, async_lag: 100}/')
run_cellgan 3 "$syncd" --fault delay:rank=2,ms=15 || { cat "$WORK/stderr" >&2; fail "sync, W=2, delayed: exit non-zero"; }
grep -q 'worker rank 1 <- cells 0,1$' "$WORK/sync2/events.log" || { cat "$WORK/sync2/events.log" >&2; fail "expected cells 0,1 on worker rank 1"; }
run_cellgan 3 "$asyncd" --fault delay:rank=2,ms=15 || { cat "$WORK/stderr" >&2; fail "async, W=2, delayed: exit non-zero"; }
[ "$(wc -l < "$WORK/async2/metrics.jsonl")" -eq 24 ] || fail "async: expected 24 metric lines (4 cells x 6 generations)"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["scores"]; assert s["mode_tvd"] == s["mode_tvd"]' \
  "$WORK/async2/result.json" || fail "async: result.json has no score"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["exchange"] == "async"' "$WORK/async2/run.json" \
  || fail "async: run.json does not record the exchange"
grep -q 'grid.exchange async: .*depends on the workers. timing' "$WORK/async2/events.log" \
  || { cat "$WORK/async2/events.log" >&2; fail "async: events.log does not say the result depends on timing"; }
sync_idle=$(idle_of_rank1 "$WORK/sync2/metrics.jsonl")
async_idle=$(idle_of_rank1 "$WORK/async2/metrics.jsonl")
# 20 batches of 15 ms: worker rank 2 is about 0.3 s slower per generation; sync's fast worker waits for it.
python3 -c "import sys; s, a = $sync_idle, $async_idle; sys.exit(0 if s > 0.5 and a < 0.25 * s else 1)" \
  || fail "idle of the fast worker: sync ${sync_idle} s, async ${async_idle} s (expected sync > 0.5 s and async < a quarter of it)"

# async_lag 1: SIGINT to the master once 3 generations are complete (metrics.jsonl holds a generation when every
# cell has done it: the slow worker's pace). The fast worker is at most 2 generations ahead of the slow one, so the
# stop comes within a few generations; unbounded, 4 times as fast, it would be near generation 12 by then.
lag1=$(make_config "$SRC" "$WORK/lag1" 's/^training: {generations: 4,/training: {generations: 40,/' \
  's/^grid: {rows: 2, cols: 2}/grid: {rows: 2, cols: 2, exchange: async, async_lag: 1}/')
timeout -k 10 300 "$MPIEXEC" $ROOT_FLAG --oversubscribe --bind-to none -np 3 "$CELLGAN" train "$lag1" \
  --fault delay:rank=2,ms=15 >"$WORK/stdout" 2>"$WORK/stderr" &
job=$!
for _ in $(seq 600); do
  [ "$(cat "$WORK/lag1/metrics.jsonl" 2>/dev/null | wc -l)" -ge 12 ] && break
  sleep 0.05
done
at_signal=$(python3 -c 'import json,sys; print(max(json.loads(l)["generation"] for l in open(sys.argv[1])))' "$WORK/lag1/metrics.jsonl")
master=""
[ -n "$lag1" ] || fail "async_lag 1: no configuration"  # an empty pattern would match every cellgan on the machine
for p in $(pgrep -f "cellgan train $lag1"); do
  tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=0' && master=$p
done
[ -n "$master" ] || fail "async_lag 1: the master's process was not found"
kill -INT "$master"
set +e; wait "$job"; rc=$?; set -e
[ "$rc" -eq 75 ] || { tail -5 "$WORK/stderr" >&2; fail "async_lag 1: a stop after generation $at_signal gave exit $rc, expected 75"; }
stopped=$(grep -o 'stopping after generation [0-9]*' "$WORK/stderr" | grep -o '[0-9]*$')
[ -n "$stopped" ] && [ "$stopped" -le $((at_signal + 5)) ] \
  || fail "async_lag 1: stopped after generation '${stopped}', expected at most $((at_signal + 5)) (the signal came at $at_signal)"
echo "PASS: async with W=1 is sync to the bit; with a slow worker, the fast one idles ${async_idle} s (sync: ${sync_idle} s); with async_lag 1 a stop at generation $at_signal stops after $stopped"
