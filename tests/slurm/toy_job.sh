#!/usr/bin/env bash
# sbatch the 2x2 toy job (W = 4, --ntasks=5) and wait until it finishes
# with its results: through deploy/slurm/submit.sh, which computes the
# task count, under srun --mpi=pmix (the default launcher); then with
# CELLGAN_LAUNCHER=mpirun (mpirun --enable-recovery inside the allocation),
# which must give the same ensemble.bin, to the bit. Both with
# OPENBLAS_CORETYPE unset: every rank computes with the kernels the launcher
# chose (srun passes its environment, mpirun -x).
source "$(dirname "$0")/slurm_test_lib.sh"
unset OPENBLAS_CORETYPE CELLGAN_BLAS_CHOSEN

# same_kernels JOB_ID RUN_DIR: result.json records, for every rank, the kernels the launcher's log names.
same_kernels() {
  local chosen; chosen=$(sed -n 's/^cellgan launch: blas: \(OpenBLAS [A-Za-z0-9]*\) kernels, chosen .*/\1/p' "$WORK/$1.out")
  [ -n "$chosen" ] || chosen=$(grep -o '"master": "[^"]*"' "$2/result.json" | cut -d'"' -f4)  # no choice made: OpenBLAS's
  local kernels; kernels=$(grep -A6 '"blas_kernels"' "$2/result.json" | grep -o '"OpenBLAS [A-Za-z0-9]*"' | tr -d '"')
  [ "$(wc -l <<< "$kernels")" -eq 5 ] && [ "$(sort -u <<< "$kernels")" = "$chosen" ] \
    || fail "job $1: the 5 ranks' kernels are not all $chosen: $(echo $kernels)"
}

# deploy/slurm/submit.sh computes --ntasks = 4 + 1 from the 2x2 grid.
id=$(cd "$WORK" && CELLGAN_RUN_DIR=$WORK/run-srun "$SOURCE/deploy/slurm/submit.sh" --parsable --output="$WORK/%j.out" "$TOY") \
  || fail "submit.sh refused the job"
JOBS+=("$id")
[ "$(job_field "$id" NumTasks)" = 5 ] || fail "submit.sh: job $id has $(job_field "$id" NumTasks) tasks, expected 5"
wait_state "$id" 120 COMPLETED FAILED CANCELLED TIMEOUT
[ "$(job_field "$id" JobState)" = COMPLETED ] || { cat "$WORK/$id.out" >&2; fail "srun job $id: $(job_field "$id" JobState)"; }
[ "$(job_field "$id" ExitCode)" = 0:0 ] || fail "srun job $id: exit code $(job_field "$id" ExitCode)"
for f in result.json ensemble.bin metrics.jsonl; do
  [ -s "$WORK/run-srun/$f" ] || { cat "$WORK/$id.out" >&2; fail "srun job $id: no $f in its run folder"; }
done
grep -q "cellgan launch: srun --mpi=pmix --ntasks 5 " "$WORK/$id.out" || fail "srun job $id: the log does not show the srun launch"
grep -q "best ensemble: " "$WORK/$id.out" || fail "srun job $id: no result line in the job log"
same_kernels "$id" "$WORK/run-srun"

id2=$(CELLGAN_LAUNCHER=mpirun submit "$WORK/run-mpirun" --)
wait_state "$id2" 120 COMPLETED FAILED CANCELLED TIMEOUT
[ "$(job_field "$id2" JobState)" = COMPLETED ] || { cat "$WORK/$id2.out" >&2; fail "mpirun job $id2: $(job_field "$id2" JobState)"; }
grep -q -- "--enable-recovery -np 5 " "$WORK/$id2.out" || fail "mpirun job $id2: the log does not show mpirun --enable-recovery"
same_kernels "$id2" "$WORK/run-mpirun"
cmp -s "$WORK/run-srun/ensemble.bin" "$WORK/run-mpirun/ensemble.bin" \
  || fail "ensemble.bin differs between the srun and the mpirun job"
echo "PASS: the 2x2 toy job finished under sbatch with srun and with mpirun --enable-recovery, the same ensemble.bin"
