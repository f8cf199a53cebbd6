#!/usr/bin/env bash
# A job with a bad configuration fails at once (exit 2, within seconds),
# with cellgan's one-line error in its log, and is not requeued; nothing is
# written in its run folder. Also: fewer than 2 tasks is refused by the
# script itself with one line.
source "$(dirname "$0")/slurm_test_lib.sh"

start=$SECONDS
id=$(submit "$WORK/run" -- --set grid.rows=0)
wait_state "$id" 60 COMPLETED FAILED CANCELLED TIMEOUT
[ "$(job_field "$id" JobState)" = FAILED ] || fail "job $id: $(job_field "$id" JobState), expected FAILED"
[ "$(job_field "$id" ExitCode)" = 2:0 ] || fail "job $id: exit code $(job_field "$id" ExitCode), expected 2:0"
[ "$(job_field "$id" Restarts)" = 0 ] || fail "job $id was requeued"
[ $((SECONDS - start)) -lt 30 ] || fail "job $id took $((SECONDS - start)) s to fail"
[ "$(grep -c '^cellgan: error: ' "$WORK/$id.out")" -eq 1 ] \
  && grep -q "^cellgan: error: .*grid.rows" "$WORK/$id.out" \
  || { cat "$WORK/$id.out" >&2; fail "job $id: expected one error line naming grid.rows in its log"; }
grep -q "cellgan exited 2: not requeued" "$WORK/$id.out" || fail "job $id: the log does not say it is not requeued"
[ ! -e "$WORK/run" ] || [ -z "$(ls -A "$WORK/run")" ] || fail "job $id wrote into its run folder"

id=$(cd "$WORK" && sbatch --parsable --ntasks=1 --output="$WORK/%j.out" "$SBATCH_SCRIPT" "$TOY") || fail "sbatch refused"
JOBS+=("$id")
wait_state "$id" 60 COMPLETED FAILED CANCELLED TIMEOUT
[ "$(job_field "$id" ExitCode)" = 2:0 ] || fail "a 1-task job: exit code $(job_field "$id" ExitCode), expected 2:0"
grep -q "cellgan.sbatch: error: --ntasks=1: expected W + 1 >= 2 tasks" "$WORK/$id.out" \
  || { cat "$WORK/$id.out" >&2; fail "a 1-task job: no error line naming --ntasks"; }
echo "PASS: a bad configuration fails at once with one error line, exit 2, not requeued; 1 task is refused"
