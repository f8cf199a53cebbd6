#!/usr/bin/env bash
# cellgan launch on real jobs (launch/launcher.h): the rank count it picks,
# bad input refused before any rank starts, a killed worker and a job that
# stalls (every rank stopped) both restarted from the newest checkpoint to
# the ensemble.bin of a run never interrupted, Ctrl-C as a clean stop, and
# its exit code read from the run, not from mpirun --enable-recovery (a run
# folder deleted mid-run fails the run, and the launcher says so), and a
# killed launcher stops its job with a checkpoint.
source "$(dirname "$0")/mpi_test_lib.sh"
cfg=$(make_config "$(dirname "$0")/toy-2x2.yaml" "$WORK/run" 's/generations: 4/generations: 150/')
printf 'checkpoint: {every: 10}\n' >> "$cfg"

# The PIDs of this test's ranks (their command line names $cfg).
ranks() { pgrep -f -- "$CELLGAN train $cfg" || true; }
# rank_pid RANK: the PID of that MPI rank of this test's job.
rank_pid() {
  local pid
  for pid in $(ranks); do
    if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then echo "$pid"; return; fi
  done
}
# wait_for_generation N: until metrics.jsonl holds generation N (30 s at most).
wait_for_generation() {
  for _ in $(seq 300); do
    grep -qs "\"generation\":$1," "$WORK/run/metrics.jsonl" && return 0
    sleep 0.1
  done
  fail "generation $1 was never written"
}
no_rank_left() { [ -z "$(ranks)" ] || { ps -fp "$(ranks | tr '\n' ',')" >&2 || true; fail "$1: ranks outlived the launcher"; }; }

# 1. Bad input: refused by the launcher itself, no rank started, no folder.
rc=0; launch -w 5 "$cfg" || rc=$?
[ "$rc" -eq 2 ] || { cat "$WORK/err" >&2; fail "-w 5 on a 2x2 grid: expected exit 2, got $rc"; }
[ "$(cat "$WORK/err")" = "cellgan: error: -w 5: 5 worker ranks do not fit a 2x2 grid: expected 1..4 (mpirun -np 2..5)" ] \
  || { cat "$WORK/err" >&2; fail "expected one line naming -w"; }
[ ! -e "$WORK/run" ] || fail "the run folder was created for bad input"
# ... and a folder that holds a finished run, before any rank starts.
mkdir -p "$WORK/finished" && echo '{}' > "$WORK/finished/result.json"
rc=0; launch "$cfg" --set output_dir="$WORK/finished" || rc=$?
[ "$rc" -eq 2 ] && grep -q "already holds a finished run (result.json)" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "a finished output_dir: expected exit 2 and one line, got $rc"; }
! grep -q "mpirun" "$WORK/err" || fail "mpirun was started for a finished output_dir"

# 2. The reference: W from the layout and the cores (a 2x2 grid: 4 cells).
rc=0; launch --max-restarts 0 "$cfg" || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/err" >&2; fail "the plain launch: exit $rc"; }
cores=$(getconf _NPROCESSORS_ONLN); expected=$(( cores < 4 ? cores : 4 ))
grep -q -- "-np $((expected + 1)) $CELLGAN train $cfg ($expected worker" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "expected $expected workers"; }
grep -q '"status":"finished"' "$WORK/run/run.json" && grep -q "\"workers\":$expected}" "$WORK/run/run.json" \
  || { cat "$WORK/run/run.json" >&2; fail "run.json does not say finished with $expected workers"; }
grep -q "best ensemble:" "$WORK/out" || fail "no result line on stdout"
mv "$WORK/run" "$WORK/reference"

# 3. A worker killed (kill -9) in training, plain mpirun: the job ends, the
# launcher restarts it with --resume auto, and it finishes with the same bits.
"$CELLGAN" launch -w 2 "$cfg" >"$WORK/out" 2>"$WORK/err" &
launcher=$!
wait_for_generation 6
kill -9 "$(rank_pid 2)"
rc=0; wait "$launcher" || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/err" >&2; fail "after a killed worker: exit $rc"; }
grep -q "launch: restart 1/3 with --resume auto:" "$WORK/run/events.log" \
  || { cat "$WORK/err" "$WORK/run/events.log" >&2; fail "events.log does not log the restart"; }
cmp "$WORK/run/ensemble.bin" "$WORK/reference/ensemble.bin" || fail "the restarted run's ensemble.bin differs"
grep -q '"stretches":2' "$WORK/run/run.json" || { cat "$WORK/run/run.json" >&2; fail "run.json: expected 2 stretches"; }
no_rank_left "after a killed worker"
rm -rf "$WORK/run"

# 3b. An injected kill (--fault) strikes the first attempt only: the
# restart from checkpoint 10 finishes, with the same bits.
rc=0; launch -w 2 "$cfg" --fault kill:rank=2,gen=15 || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/err" >&2; fail "after an injected kill: exit $rc"; }
[ "$(grep -c "launch: restart" "$WORK/err")" -eq 1 ] || { cat "$WORK/err" >&2; fail "expected exactly one restart"; }
grep -q "injecting fault kill" "$WORK/err" || fail "the kill was not injected"
cmp "$WORK/run/ensemble.bin" "$WORK/reference/ensemble.bin" || fail "the run restarted after an injected kill differs"
rm -rf "$WORK/run"

# 4. Every rank stopped (SIGSTOP): nothing is written; past the deadline
# the launcher ends the whole job, the stopped ranks included, and restarts.
"$CELLGAN" launch -w 2 --stall-timeout 3 "$cfg" >"$WORK/out" 2>"$WORK/err" &
launcher=$!
wait_for_generation 4
for pid in $(ranks); do kill -STOP "$pid"; done
rc=0; wait "$launcher" || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/err" >&2; fail "after a stall: exit $rc"; }
grep -q "stalled: no progress for" "$WORK/err" || { cat "$WORK/err" >&2; fail "the stall was not named"; }
grep -q "launch: restart 1/3 with --resume auto: no progress for" "$WORK/run/events.log" \
  || { cat "$WORK/run/events.log" >&2; fail "events.log does not log the stall's restart"; }
cmp "$WORK/run/ensemble.bin" "$WORK/reference/ensemble.bin" || fail "the run restarted after a stall differs"
no_rank_left "after a stall"
rm -rf "$WORK/run"

# 5. Ctrl-C (SIGINT to the launcher): a checkpoint and exit 75, no restart;
# the same command with --resume auto then finishes it to the same bits.
"$CELLGAN" launch -w 2 --recovery "$cfg" >"$WORK/out" 2>"$WORK/err" &
launcher=$!
wait_for_generation 5
# A second job for the same run folder is refused at once: the first holds run.lock.
rc=0; "$CELLGAN" launch -w 2 "$cfg" --resume auto >"$WORK/out2" 2>"$WORK/err2" || rc=$?
[ "$rc" -eq 2 ] || { cat "$WORK/err2" >&2; fail "a second job in a run folder in use: expected exit 2, got $rc"; }
grep -q "output_dir: '$WORK/run' is in use by a running job" "$WORK/err2" || { cat "$WORK/err2" >&2; fail "no line saying the folder is in use"; }
kill -INT "$launcher"
rc=0; wait "$launcher" || rc=$?
[ "$rc" -eq 75 ] || { cat "$WORK/err" >&2; fail "Ctrl-C: expected exit 75, got $rc"; }
grep -q '"status":"stopped"' "$WORK/run/run.json" || { cat "$WORK/run/run.json" >&2; fail "run.json: not stopped"; }
grep -q "stop requested (signal SIGUSR1)" "$WORK/run/events.log" \
  || { cat "$WORK/run/events.log" >&2; fail "events.log does not name the launcher's SIGUSR1"; }
! grep -q "restart" "$WORK/err" || { cat "$WORK/err" >&2; fail "a stop on request was restarted"; }
no_rank_left "after Ctrl-C"
rc=0; launch -w 2 --recovery "$cfg" --resume auto || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/err" >&2; fail "resuming after Ctrl-C: exit $rc"; }
cmp "$WORK/run/ensemble.bin" "$WORK/reference/ensemble.bin" || fail "the run resumed after Ctrl-C differs"
rm -rf "$WORK/run"

# 5b. Ctrl-C while the ranks start (before the run folder exists): a
# SIGUSR1 could end ranks still loading, so the launcher ends the job at
# once, with nothing lost, and says 75.
rm -rf "$WORK/run"
"$CELLGAN" launch -w 2 "$cfg" >"$WORK/out" 2>"$WORK/err" &
launcher=$!
for _ in $(seq 500); do pgrep -f -- "-np 3 $CELLGAN train $cfg" >/dev/null && break; sleep 0.01; done
kill -INT "$launcher"
rc=0; wait "$launcher" || rc=$?
[ "$rc" -eq 75 ] || { cat "$WORK/err" >&2; fail "Ctrl-C at start-up: expected exit 75, got $rc"; }
grep -Eq "stopped on request (before the run started|\(exit 75\))" "$WORK/err" || { cat "$WORK/err" >&2; fail "no stop line"; }
no_rank_left "after Ctrl-C at start-up"
rm -rf "$WORK/run"

# 6. The run folder gone mid-run: the master notices at its next
# generation (or a worker at its next checkpoint) and fails the run (exit 1)
# with one line naming the folder; mpirun
# --enable-recovery exits 0, the launcher says 1 (no restarts left).
"$CELLGAN" launch -w 2 --recovery --max-restarts 0 "$cfg" >"$WORK/out" 2>"$WORK/err" &
launcher=$!
wait_for_generation 5
mv "$WORK/run" "$WORK/gone"  # the folder disappears from its path (rm -rf would race the writes)
rc=0; wait "$launcher" || rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/err" >&2; fail "a deleted run folder under --recovery: expected exit 1, got $rc"; }
# The master's run.json or a worker's checkpoint write meets it first.
grep -Eq "cellgan: failed: (.* )?$WORK/run[/:]" "$WORK/err" || { cat "$WORK/err" >&2; fail "no line naming the run folder"; }
grep -q "giving up after 0 restarts: the run failed (exit 1)" "$WORK/err" || { cat "$WORK/err" >&2; fail "no ending line"; }
no_rank_left "after the run folder was deleted"
# 7. The launcher killed (kill -9): the job does not run on unwatched; the
# master stops it with a checkpoint, and a new launch finishes it.
rm -rf "$WORK/run" "$WORK/gone"
"$CELLGAN" launch -w 2 "$cfg" >"$WORK/out" 2>"$WORK/err" &
launcher=$!
wait_for_generation 5
kill -9 "$launcher"
wait "$launcher" || true
for _ in $(seq 200); do [ -z "$(ranks)" ] && break; sleep 0.1; done
no_rank_left "after the launcher was killed"
grep -q '"status":"stopped"' "$WORK/run/run.json" || { cat "$WORK/run/run.json" "$WORK/err" >&2; fail "run.json: not stopped"; }
grep -q "stop requested (cellgan launch, which started the job, is gone)" "$WORK/run/events.log" \
  || { cat "$WORK/run/events.log" >&2; fail "events.log does not say why the run stopped"; }
rc=0; launch -w 2 "$cfg" --resume auto || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/err" >&2; fail "resuming after the launcher was killed: exit $rc"; }
cmp "$WORK/run/ensemble.bin" "$WORK/reference/ensemble.bin" || fail "the run resumed after the launcher was killed differs"
echo "launch_restarts: ok"
