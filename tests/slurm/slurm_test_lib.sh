# Shared helpers of the SLURM test scripts (sourced). The cluster is the
# CTest fixture's (deploy/slurm/local-cluster.sh in $CELLGAN_SLURM_DIR);
# every job runs deploy/slurm/cellgan.sbatch on a copy of the 2x2 toy
# configuration of tests/mpi, with its run folder in $WORK.
set -euo pipefail
: "${CELLGAN:?CELLGAN must name the cellgan binary}"
: "${CELLGAN_SLURM_DIR:?CELLGAN_SLURM_DIR must name the folder of the local cluster}"
: "${MPIEXEC:=mpirun}"
export SLURM_CONF=$CELLGAN_SLURM_DIR/slurm.conf
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
SOURCE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SBATCH_SCRIPT=$SOURCE/deploy/slurm/cellgan.sbatch
TOY=$SOURCE/tests/mpi/toy-2x2.yaml
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
WORK=$(mktemp -d /tmp/cellgan-slurm-test.XXXXXX)
JOBS=()
cleanup() {
  local id
  for id in "${JOBS[@]}"; do scancel "$id" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$SOURCE/deploy/slurm/local-cluster.sh" status >/dev/null 2>&1 \
  || fail "the local cluster in $CELLGAN_SLURM_DIR is not up (the slurm_cluster fixture starts it)"

# submit RUN_DIR [SBATCH OPTIONS...] -- [TRAIN ARGS...]: sbatch from $WORK, the
# job log in $WORK/<jobid>.out; prints the job id.
submit() {
  local run_dir=$1 opts=()
  shift
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  local id
  id=$(cd "$WORK" && CELLGAN_RUN_DIR=$run_dir sbatch --parsable --ntasks=5 --output="$WORK/%j.out" \
         "${opts[@]}" "$SBATCH_SCRIPT" "$TOY" "$@") || fail "sbatch refused the job"
  JOBS+=("$id")
  echo "$id"
}

# job_field ID NAME: a field of `scontrol show job` (JobState, ExitCode, Restarts, ...).
job_field() { scontrol -o show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# wait_state ID SECONDS STATE...: waits until the job is in one of STATEs;
# fails with its log after SECONDS. (A requeued job starts again after the
# cluster's CELLGAN_SLURM_REQUEUE_DELAY, 10 s.)
wait_state() {
  local id=$1 limit=$2 state
  shift 2
  local deadline=$((SECONDS + limit))
  while [ "$SECONDS" -lt "$deadline" ]; do
    state=$(job_field "$id" JobState)
    for s in "$@"; do [ "$state" = "$s" ] && return 0; done
    sleep 0.5
  done
  cat "$WORK/$id.out" >&2 2>/dev/null || true
  fail "job $id: still $state after $limit s, expected $*"
}

# wait_generation RUN_DIR N SECONDS: until metrics.jsonl has a record of generation N.
wait_generation() {
  local deadline=$((SECONDS + $3))
  until grep -q "\"generation\":$2," "$1/metrics.jsonl" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || fail "$1: no generation $2 within $3 s"
    sleep 0.2
  done
}

# reference_run RUN_DIR [TRAIN ARGS...]: the same toy run under plain mpirun, uninterrupted.
reference_run() {
  local out=$1
  shift
  timeout -k 10 300 "$MPIEXEC" $ROOT_FLAG --oversubscribe --bind-to none -np 5 "$CELLGAN" train "$TOY" \
    --set "output_dir=$out" "$@" >"$WORK/reference.stdout" 2>"$WORK/reference.stderr" \
    || { cat "$WORK/reference.stderr" >&2; fail "the reference run under mpirun failed"; }
}
