#!/usr/bin/env bash
# S1 (issue 21): what running under SLURM adds. The 2x2 toy job of the tests
# (tests/mpi/toy-2x2.yaml, W = 4) in pairs: under plain mpirun (start to
# exit), and submitted with deploy/slurm/cellgan.sbatch (sbatch to the job's
# COMPLETED state, polled every 0.1 s) on the local single-node cluster.
# Prints the median of each and their difference; the target is at most
# 10 s more under SLURM.
#
# Environment (all optional):
#   CELLGAN            cellgan binary            (build/app/cellgan)
#   S1_REPEATS         pairs                     (5)
#   CELLGAN_SLURM_DIR  the local cluster's folder; it is started when down
#                      and then stopped at the end (/tmp/cellgan-slurm-s1)
#   BENCH_DIR          where runs and logs go    (a new /tmp/cellgan-s1.XXXXXX)
set -euo pipefail
cd "$(dirname "$0")/../.."
CELLGAN=$(realpath "${CELLGAN:-build/app/cellgan}")
REPEATS=${S1_REPEATS:-5}
export CELLGAN_SLURM_DIR=${CELLGAN_SLURM_DIR:-/tmp/cellgan-slurm-s1}
export SLURM_CONF=$CELLGAN_SLURM_DIR/slurm.conf
DIR=${BENCH_DIR:-$(mktemp -d /tmp/cellgan-s1.XXXXXX)}
mkdir -p "$DIR"
[ -x "$CELLGAN" ] || { echo "s1: $CELLGAN: not an executable (build it first, or set CELLGAN)" >&2; exit 2; }
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OMPI_MCA_mpi_yield_when_idle=1
ROOT_FLAG=""; [ "$(id -u)" -eq 0 ] && ROOT_FLAG="--allow-run-as-root"
TOY=$PWD/tests/mpi/toy-2x2.yaml
SBATCH_SCRIPT=$PWD/deploy/slurm/cellgan.sbatch

started=0
if ! bash deploy/slurm/local-cluster.sh status >/dev/null 2>&1; then
  bash deploy/slurm/local-cluster.sh start >/dev/null 2>&1
  started=1
fi
trap '[ "$started" -eq 0 ] || bash deploy/slurm/local-cluster.sh stop >/dev/null 2>&1' EXIT

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f\n", b - a }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: >"$DIR/mpirun.txt"
: >"$DIR/slurm.txt"
for i in $(seq 1 "$REPEATS"); do
  t0=$(now)
  mpirun $ROOT_FLAG --oversubscribe --bind-to none -np 5 "$CELLGAN" train "$TOY" --set "output_dir=$DIR/mpirun-$i" \
    >"$DIR/mpirun-$i.log" 2>&1
  elapsed "$t0" >>"$DIR/mpirun.txt"

  t0=$(now)
  id=$(cd "$DIR" && CELLGAN=$CELLGAN CELLGAN_RUN_DIR=$DIR/slurm-$i sbatch --parsable --ntasks=5 \
         --output="$DIR/slurm-$i.log" "$SBATCH_SCRIPT" "$TOY")
  while :; do
    state=$(scontrol -o show job "$id" | tr ' ' '\n' | sed -n 's/^JobState=//p')
    case $state in COMPLETED) break ;; FAILED|CANCELLED|TIMEOUT|NODE_FAIL) echo "s1: job $id $state" >&2; exit 1 ;; esac
    sleep 0.1
  done
  elapsed "$t0" >>"$DIR/slurm.txt"
  cmp -s "$DIR/mpirun-$i/ensemble.bin" "$DIR/slurm-$i/ensemble.bin" || { echo "s1: the two runs differ" >&2; exit 1; }
done

m=$(median <"$DIR/mpirun.txt")
s=$(median <"$DIR/slurm.txt")
printf 'S1: 2x2 toy job (W = 4), median of %d: mpirun %.2f s, SLURM submit-to-finish %.2f s, +%.2f s (target <= 10 s)\n' \
  "$REPEATS" "$m" "$s" "$(awk -v a="$m" -v b="$s" 'BEGIN { print b - a }')" | tee "$DIR/s1.txt"
echo "runs and logs: $DIR" >&2
