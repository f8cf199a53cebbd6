#!/usr/bin/env bash
# The fault `stall` under mpirun: worker rank 2's whole process stops at the
# start of generation 3. Shorter than runtime.dead_after_ms, the master
# reports it late, then recovered, and the run finishes with the bits of a
# run without the fault; events.log says how long it stopped. Longer, the
# master declares it dead and kills it by PID; plain mpirun then ends the
# job without a result, and the same command with --resume auto finishes
# it with the bits of the run without the fault (recovery by restart).
source "$(dirname "$0")/mpi_test_lib.sh"
SRC="$(dirname "$0")/toy-2x2.yaml"
# Dead after 2.5 s: a 1 s stall stays well inside it even on a loaded machine, a 4 s one does not.
fast='s/heartbeat_interval_ms: 100/heartbeat_interval_ms: 100, late_after_ms: 400, dead_after_ms: 2500/'
run_train() {  # CONFIG [ARGS...]: the exit code
  set +e
  timeout -k 10 120 "$MPIEXEC" $ROOT_FLAG --oversubscribe --bind-to none -np 3 "$CELLGAN" train "$@" \
    >"$WORK/stdout" 2>"$WORK/stderr"
  local rc=$?
  set -e
  return $rc
}

run_train "$(make_config "$SRC" "$WORK/plain" "$fast")" || { cat "$WORK/stderr" >&2; fail "the run without faults failed"; }
run_train "$(make_config "$SRC" "$WORK/short" "$fast")" --fault stall:rank=2,gen=3,seconds=1 \
  || { cat "$WORK/stderr" >&2; fail "a 1 s stall (dead after 2.5 s) ended the run"; }
ev="$WORK/short/events.log"
grep -q 'fault planned: stall worker rank 2 for 1 s at the start of generation 3' "$ev" \
  && grep -q 'worker rank 2 late: silent for' "$ev" \
  && grep -q 'worker rank 2 recovered' "$ev" \
  && grep -Eq 'fault stall: stall worker rank 2 for 1 s at the start of generation 3 \(stopped [12]\.[0-9] s\)' "$ev" \
  || { cat "$ev" >&2; fail "events.log does not tell the short stall"; }
cmp -s "$WORK/plain/ensemble.bin" "$WORK/short/ensemble.bin" || fail "the stall changed the result"
cmp -s <(losses "$WORK/plain/metrics.jsonl") <(losses "$WORK/short/metrics.jsonl") || fail "the stall changed the losses"

long_cfg="$(make_config "$SRC" "$WORK/long" "$fast")"
rc=0; run_train "$long_cfg" --fault stall:rank=2,gen=3,seconds=4 || rc=$?
[ "$rc" -ne 0 ] || { cat "$WORK/stderr" >&2; fail "a 4 s stall under plain mpirun: expected the run to stop, got exit 0"; }
grep -q 'worker rank 2 dead: silent for' "$WORK/long/events.log" \
  && grep -q 'worker rank 2 is lost' "$WORK/long/events.log" \
  && grep -q 'killed worker rank 2 (pid ' "$WORK/long/events.log" \
  || { cat "$WORK/long/events.log" >&2; fail "events.log does not say rank 2 was declared dead and killed"; }
[ ! -e "$WORK/long/result.json" ] || fail "a result after rank 2 was declared dead"
# By restart: the same command with --resume auto finishes the run, with the bits of the run without faults.
run_train "$long_cfg" --resume auto || { cat "$WORK/stderr" >&2; fail "--resume auto after the stall failed"; }
cmp -s "$WORK/plain/ensemble.bin" "$WORK/long/ensemble.bin" || fail "the resumed run differs from the run without faults"
cmp -s <(losses "$WORK/plain/metrics.jsonl") <(losses "$WORK/long/metrics.jsonl") || fail "the resumed losses differ"
# In place: under --enable-recovery the job ends with the survivors, long
# before a 90 s stall would have ended (the stopped rank, killed, holds
# nothing of mpirun's open).
began=$(date +%s)
set +e
timeout -k 10 120 "$MPIEXEC" $ROOT_FLAG --oversubscribe --bind-to none --enable-recovery -np 4 "$CELLGAN" train \
  "$(make_config "$SRC" "$WORK/inplace" "$fast")" --fault stall:rank=2,gen=3,seconds=90 >"$WORK/stdout" 2>"$WORK/stderr"
rc_inplace=$?
set -e
took=$(($(date +%s) - began))
[ -e "$WORK/inplace/result.json" ] || { cat "$WORK/stderr" >&2; fail "a 90 s stall under --enable-recovery: no result (exit $rc_inplace)"; }
[ "$took" -lt 60 ] || fail "a 90 s stall under --enable-recovery: the job took $took s (mpirun waited for the stall to end)"
echo "PASS: stall: 1 s late then recovered, same bits; 4 s declared dead and killed (exit $rc), then --resume auto gives the same bits; in place the job ends in $took s"

