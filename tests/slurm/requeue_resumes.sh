#!/usr/bin/env bash
# `scontrol requeue` of a running job: SLURM kills its ranks and queues it
# again; the next start (SLURM_RESTART_COUNT=1) passes --resume auto and
# goes on from the newest complete checkpoint, and the job finishes with the
# ensemble.bin of an uninterrupted run, to the bit. (A requeued job waits
# the local cluster's 10 s before it starts again, not SLURM's usual 120 s.)
source "$(dirname "$0")/slurm_test_lib.sh"
# The delay fault (every batch of rank 1 sleeps 40 ms) makes the run last
# about 10 s without using the cores, and changes no result.
settings=(--set training.generations=12 --set checkpoint.every=2)
slow=(--fault delay:rank=1,ms=40)

reference_run "$WORK/reference" "${settings[@]}"
id=$(submit "$WORK/run" -- "${settings[@]}" "${slow[@]}")
wait_state "$id" 60 RUNNING
wait_generation "$WORK/run" 4 120
[ ! -e "$WORK/run/result.json" ] || fail "job $id finished before the requeue: make the run longer"
scontrol requeue "$id" || fail "scontrol requeue $id refused"
wait_state "$id" 240 COMPLETED FAILED CANCELLED TIMEOUT
[ "$(job_field "$id" JobState)" = COMPLETED ] || { cat "$WORK/$id.out" >&2; fail "job $id: $(job_field "$id" JobState)"; }
[ "$(job_field "$id" Restarts)" -ge 1 ] || fail "job $id was not restarted"
grep -q "cellgan.sbatch: job $id, start 2," "$WORK/$id.out" || { cat "$WORK/$id.out" >&2; fail "job $id: no second start in its log"; }
grep -Eq "resuming after generation [1-9][0-9]* from " "$WORK/run/events.log" || { cat "$WORK/run/events.log" >&2; fail "events.log does not show a resume from a checkpoint"; }
# Logged as a requeue, not as a fault: the workers leave SIGTERM to the master.
grep -q "SLURM requeued job $id (restart 1): resuming" "$WORK/run/events.log" || { cat "$WORK/run/events.log" >&2; fail "events.log does not say SLURM requeued the job"; }
! grep -Eq "worker rank [0-9]+ (dead|lost)" "$WORK/run/events.log" || { cat "$WORK/run/events.log" >&2; fail "a requeue logged as a lost worker"; }
[ -s "$WORK/run/result.json" ] || fail "job $id: no result.json"
cmp -s "$WORK/run/ensemble.bin" "$WORK/reference/ensemble.bin" \
  || fail "job $id: ensemble.bin differs from the uninterrupted run's"
echo "PASS: requeued after generation 4, logged as a requeue, resumed from its checkpoint, the uninterrupted run's ensemble.bin"
