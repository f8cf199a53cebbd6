#!/usr/bin/env bash
# cellgan launch at the edges of a job's life: an interrupt while the
# launcher itself is still loading (a background job of a script, started
# with SIGINT ignored) stops the run; an mpirun stopped (SIGSTOP) after its
# ranks did their work does not hold the launcher until the stall deadline;
# a worker lost under --recovery leaves no stray Open MPI lines
# ("PMIX ERROR: BAD-PARAM", "Read -1, expected ...") on stderr; a kill
# among the configuration's faults is warned of (it strikes every restart).
source "$(dirname "$0")/mpi_test_lib.sh"
cfg=$(make_config "$(dirname "$0")/toy-2x2.yaml" "$WORK/run" 's/generations: 4/generations: 30/')
ranks() { pgrep -f -- "$CELLGAN train $cfg" || true; }
no_process_left() {
  [ -z "$(ranks)" ] && ! pgrep -f -- "mpirun.*$cfg" >/dev/null || { ps -ef | grep -- "$cfg" >&2; fail "$1: processes outlived the launcher"; }
}

# 1. SIGINT 0.3 s after the start, while LibTorch still loads in the launcher:
# the run stops (75) and does not finish.
"$CELLGAN" launch -w 2 "$cfg" >"$WORK/out" 2>"$WORK/err" &
launcher=$!
sleep 0.3
kill -INT "$launcher"
rc=0; wait "$launcher" || rc=$?
[ "$rc" -eq 75 ] || { cat "$WORK/err" >&2; fail "SIGINT 0.3 s after the start: expected exit 75, got $rc"; }
[ ! -e "$WORK/run/result.json" ] || fail "SIGINT 0.3 s after the start: the run finished anyway"
no_process_left "after an early SIGINT"
rm -rf "$WORK/run"

# 2. mpirun stopped: the ranks finish the run (MPI_Finalize gives up on the
# stopped mpirun after 10 s); the launcher then ends mpirun within seconds,
# not after --stall-timeout.
"$CELLGAN" launch -w 2 --stall-timeout 120 "$cfg" >"$WORK/out" 2>"$WORK/err" &
launcher=$!
for _ in $(seq 300); do grep -qs '"generation":2,' "$WORK/run/metrics.jsonl" && break; sleep 0.1; done
mpirun_pid=$(pgrep -P "$launcher" -x mpirun) || fail "no mpirun under the launcher"
kill -STOP "$mpirun_pid"
stopped_at=$(date +%s)
rc=0; wait "$launcher" || rc=$?
took=$(( $(date +%s) - stopped_at ))
[ "$rc" -eq 0 ] && [ -f "$WORK/run/result.json" ] || { cat "$WORK/err" >&2; fail "a stopped mpirun: expected exit 0 and a result, got $rc"; }
[ "$took" -lt 60 ] || { cat "$WORK/err" >&2; fail "a stopped mpirun held the launcher $took s after it was stopped"; }
grep -q "the run has ended (its exit code is written) but mpirun/srun has not exited: ending it" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "the launcher did not say why it ended mpirun"; }
no_process_left "after a stopped mpirun"
rm -rf "$WORK/run"

# 3. A worker killed under --recovery: survived in place, with no stray lines.
rc=0; timeout -k 10 240 "$CELLGAN" launch -w 2 --recovery "$cfg" --fault kill:rank=2,gen=3 >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$WORK/err" >&2; fail "a worker killed under --recovery: exit $rc"; }
! grep -E "PMIX ERROR|Read -1, expected" "$WORK/err" || fail "Open MPI's stray lines on stderr"
rm -rf "$WORK/run"

# 4. A kill in the configuration's faults, without --recovery: the launcher
# warns that every restart meets it again.
{ cat "$cfg"; echo "faults: [{kind: kill, rank: 2, gen: 2}]"; } > "$WORK/faults.yaml"
rc=0; timeout -k 10 120 "$CELLGAN" launch -w 2 --max-restarts 0 "$WORK/faults.yaml" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" -ne 0 ] || fail "a configured kill with no restarts left: exit 0"
grep -q "warning: the configuration's fault 'kill:rank=2,gen=2' strikes every attempt" "$WORK/err" ||
  { cat "$WORK/err" >&2; fail "no warning about the configuration's kill"; }
echo "PASS: an early SIGINT stops the run, a stopped mpirun is ended, no stray Open MPI lines, configured kills warned of"
