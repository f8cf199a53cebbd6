#!/usr/bin/env bash
# The time-limit signal: SIGUSR1 to the batch script, as
# `#SBATCH --signal=B:USR1@N` sends it before the time limit. SLURM's own
# signal arrives up to 60 s early or late, so the test sends the same signal
# at once with `scancel --batch --signal=USR1`. The script forwards it to
# the launcher, which passes it to the ranks; the master checkpoints at the
# next generation boundary and cellgan exits 75; the script requeues its
# job, which resumes and finishes with the ensemble.bin of an uninterrupted
# run, to the bit. Under srun (the default), then under
# CELLGAN_LAUNCHER=mpirun, where mpirun --enable-recovery exits 0 and the
# script reads the master's last line instead.
source "$(dirname "$0")/slurm_test_lib.sh"
# The delay fault (every batch of rank 1 sleeps 40 ms) makes the run last
# about 10 s without using the cores, and changes no result.
settings=(--set training.generations=12 --set checkpoint.every=5)
slow=(--fault delay:rank=1,ms=40)

reference_run "$WORK/reference" "${settings[@]}"
for launcher in srun mpirun; do
  run=$WORK/run-$launcher
  id=$(CELLGAN_LAUNCHER=$launcher submit "$run" --time=10 --signal=B:USR1@60 -- "${settings[@]}" "${slow[@]}")
  wait_state "$id" 60 RUNNING
  wait_generation "$run" 2 120
  scancel --batch --signal=USR1 "$id" || fail "scancel --signal=USR1 $id refused"
  wait_state "$id" 240 COMPLETED FAILED CANCELLED TIMEOUT
  log=$WORK/$id.out
  [ "$(job_field "$id" JobState)" = COMPLETED ] || { cat "$log" >&2; fail "$launcher job $id: $(job_field "$id" JobState)"; }
  grep -q "SIGUSR1: asking the run to checkpoint and stop" "$log" || { cat "$log" >&2; fail "$launcher: the script did not see SIGUSR1"; }
  grep -q "^cellgan: stopped: stopped after generation" "$log" || { cat "$log" >&2; fail "$launcher: cellgan did not stop with a checkpoint"; }
  grep -q "a requeued job resumes by itself; else submit it again with CELLGAN_RUN_DIR=$run" "$run/events.log" \
    || { cat "$run/events.log" >&2; fail "$launcher: the stop does not say how a SLURM job resumes"; }
  grep -q "stopped with a checkpoint on SIGUSR1: requeueing job $id" "$log" \
    || { cat "$log" >&2; fail "$launcher: the script did not requeue its job"; }
  grep -q "cellgan.sbatch: job $id, start 2," "$log" || { cat "$log" >&2; fail "$launcher job $id: no second start"; }
  grep -q "stopped after generation" "$run/events.log" && grep -Eq "resuming after generation [1-9][0-9]* from " "$run/events.log" \
    || { cat "$run/events.log" >&2; fail "$launcher: events.log does not show the stop and the resume from its checkpoint"; }
  cmp -s "$run/ensemble.bin" "$WORK/reference/ensemble.bin" \
    || fail "$launcher job $id: ensemble.bin differs from the uninterrupted run's"
done
echo "PASS: SIGUSR1 to the batch script under srun and mpirun: checkpoint, exit 75, requeued, resumed, the uninterrupted run's ensemble.bin"
