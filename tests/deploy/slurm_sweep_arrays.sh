#!/usr/bin/env bash
# deploy/slurm/sweep.sh without a cluster: a stand-in sbatch records what
# would be submitted, and an array task is run by hand against a stand-in
# cellgan.sbatch. (The real SLURM tests are labelled slurm.)
#  - one array per W, of as many tasks as cellgan sweep --list gives runs
#    with that W, --ntasks=W+1, --requeue and the time-limit signal; one
#    task at a time (%1, each array after the one before) unless
#    --parallel;
#  - the runs that do not fit are not submitted;
#  - an array task passes CONFIG, its run's --set settings and its run
#    folder (CELLGAN_RUN_DIR = OUT/runs/NAME) to cellgan.sbatch;
#  - the keys --vary varies are recorded in OUT/runs/varied-keys.txt;
#  - the collect command is printed; bad options give one line and exit 2.
set -euo pipefail
: "${CELLGAN:?CELLGAN must name the cellgan binary}"
HERE=$(cd "$(dirname "$0")" && pwd)
SWEEP_SH=$HERE/../../deploy/slurm/sweep.sh
CONFIG=$HERE/../sweep/toy-sweep.yaml
WORK=$(mktemp -d /tmp/cellgan-slurm-sweep.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > "$WORK/sbatch" <<'STUB'
#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/submitted"
echo "$((100 + $(wc -l < "$(dirname "$0")/submitted")))"
STUB
chmod +x "$WORK/sbatch"
SBATCH=$WORK/sbatch "$SWEEP_SH" --time=10 --config "$CONFIG" --grids 1x1,2x2,3x3 --workers 1,4 --seeds 2 \
  --set training.generations=3 --out "$WORK/sweep" > "$WORK/out" 2> "$WORK/err" ||
  { cat "$WORK/err" >&2; fail "sweep.sh failed"; }
[ "$(wc -l < "$WORK/submitted")" -eq 2 ] || fail "expected 2 arrays (W = 1 and 4), got: $(cat "$WORK/submitted")"
w1=$(sed -n 1p "$WORK/submitted") w4=$(sed -n 2p "$WORK/submitted")
for opt in --array=0-5%1 --ntasks=2 --requeue --signal=B:USR1@300 --time=10; do
  grep -q -- " $opt\| $opt$\|^$opt " <<< "$w1" || fail "W = 1 array lacks $opt: $w1"
done
# W = 4 fits 2x2 and 3x3 (not 1x1): 2 grids x 2 seeds.
grep -q -- "--array=0-3%1 --ntasks=5" <<< "$w4" || fail "W = 4 array: expected 4 tasks of 5 SLURM tasks, one at a time: $w4"
grep -q -- "--dependency=afterany:101 " <<< "$w4" || fail "W = 4 array: expected to start after W = 1's (job 101): $w4"
grep -q -- "--dependency" <<< "$w1" && fail "the first array waits for nothing: $w1"
rm "$WORK/submitted"
SBATCH=$WORK/sbatch "$SWEEP_SH" --config "$CONFIG" --grids 2x2 --workers 1,4 --parallel --out "$WORK/parallel" \
  > /dev/null 2> "$WORK/err" || { cat "$WORK/err" >&2; fail "sweep.sh --parallel failed"; }
grep -q -- "%1\|--dependency" "$WORK/submitted" && fail "--parallel: the runs are still ordered: $(cat "$WORK/submitted")"
[ "$(grep -c -- "--array=0-0 " "$WORK/submitted")" -eq 2 ] || fail "--parallel: $(cat "$WORK/submitted")"
[ "$(wc -l < "$WORK/sweep/plan-w4.tsv")" -eq 4 ] || fail "plan-w4.tsv: expected 4 runs"
grep -q "^g1x1-w4" "$WORK/sweep/plan-w4.tsv" && fail "a 1x1 run with 4 workers was submitted"
grep -q "sweep --collect $WORK/sweep/runs --out $WORK/sweep" "$WORK/out" || fail "no collect command printed"

# An array task: line 3 of the W = 4 plan (task id 2) is 3x3, seed 3.
cat > "$WORK/cellgan.sbatch" <<'STUB'
#!/usr/bin/env bash
printf '%s\n' "RUN_DIR=$CELLGAN_RUN_DIR" "$@"
STUB
SLURM_ARRAY_TASK_ID=2 bash "$SWEEP_SH" --task "$WORK/sweep/plan-w4.tsv" "$CONFIG" "$WORK" > "$WORK/task" 2>/dev/null ||
  fail "the array task failed"
expected=$(printf '%s\n' "RUN_DIR=$WORK/sweep/runs/g3x3-w4-s3" "$CONFIG" --set training.generations=3 --set grid.rows=3 \
  --set grid.cols=3 --set seed=3)
[ "$(cat "$WORK/task")" = "$expected" ] || { diff <(echo "$expected") "$WORK/task" >&2; fail "the task ran another command"; }

# The keys varied are recorded beside the runs, for --collect's columns.
SBATCH=$WORK/sbatch "$SWEEP_SH" --config "$CONFIG" --grids 1x1 --workers 1 --vary training.batch_size=50,100 \
  --vary training.learning_rate=0.001 --out "$WORK/varied" > /dev/null 2> "$WORK/err" ||
  { cat "$WORK/err" >&2; fail "sweep.sh --vary failed"; }
[ "$(cat "$WORK/varied/runs/varied-keys.txt")" = $'training.batch_size\ntraining.learning_rate' ] ||
  fail "varied-keys.txt: $(cat "$WORK/varied/runs/varied-keys.txt")"

# Bad options: one line, exit 2, nothing submitted.
rm -f "$WORK/submitted"
for bad in "--grids 2y2 --workers 1" "--grids 2x2 --workers 0" "--grids 2x2 --workers 1 --bogus 1"; do
  set +e
  # shellcheck disable=SC2086
  SBATCH=$WORK/sbatch "$SWEEP_SH" --config "$CONFIG" $bad --out "$WORK/bad" > /dev/null 2> "$WORK/err"
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "sweep.sh $bad exited $rc, expected 2"
  [ "$(wc -l < "$WORK/err")" -eq 1 ] || { cat "$WORK/err" >&2; fail "sweep.sh $bad: expected one line"; }
  [ -e "$WORK/submitted" ] && fail "sweep.sh $bad submitted something"
done
echo "PASS: one array per W with the right task counts and options; a task runs cellgan.sbatch on its run"
