# Shared helpers of the multi-rank test scripts (sourced).
# Usage in a script: source mpi_test_lib.sh; then run_cellgan NP CONFIG.
set -euo pipefail
: "${CELLGAN:?CELLGAN must name the cellgan binary}"
: "${MPIEXEC:=mpirun}"
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
WORK=$(mktemp -d /tmp/cellgan-mpi-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# make_config SOURCE OUTPUT_DIR [sed expressions...] -> path of the new config
make_config() {
  local src=$1 out=$2; shift 2
  local cfg="$WORK/$(basename "$out").yaml"
  sed "s|^output_dir: .*|output_dir: $out|" "$src" > "$cfg"
  for expr in "$@"; do sed -i "$expr" "$cfg"; done
  echo "$cfg"
}

# run_cellgan NP CONFIG [TRAIN OPTIONS...]: runs the job, returns its exit code, keeps stderr in $WORK/stderr
run_cellgan() {
  local np=$1 cfg=$2
  shift 2
  set +e
  timeout -k 10 300 "$MPIEXEC" $ROOT_FLAG --oversubscribe --bind-to none -np "$np" "$CELLGAN" train "$cfg" "$@" >"$WORK/stdout" 2>"$WORK/stderr"
  local rc=$?
  set -e
  return $rc
}

# The loss columns of metrics.jsonl, one line per record (timings dropped).
losses() {
  grep -o '"cell":[0-9]*\|"generation":[0-9]*\|"generator_loss":[^,]*\|"discriminator_loss":[^,]*' "$1" | paste -d' ' - - - -
}

# launch [ARGS...]: runs cellgan launch in the foreground; its exit code, its output in $WORK/out and $WORK/err.
launch() {
  set +e
  timeout -k 10 240 "$CELLGAN" launch "$@" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  set -e
  return $rc
}
